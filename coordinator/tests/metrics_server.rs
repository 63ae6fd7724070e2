//! The `/metrics` endpoint as an HTTP client sees it: the bound address for port 0, the text
//! exposition with its content type (HTTP/1.0 and 1.1, HEAD without a body, query strings
//! ignored), `/healthz`, 404 and 405 answers, a refused bind naming the address, and nothing
//! listening once the server is dropped.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use coordinator::metrics::{serve, MetricsError};

/// Send `request` as is and read the answer until the server closes: (status, head, body).
fn exchange(addr: SocketAddr, request: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .expect("the server closes the connection");
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, head.to_ascii_lowercase(), body.to_string())
}

fn get(addr: SocketAddr, method: &str, path: &str) -> (u16, String, String) {
    exchange(
        addr,
        &format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn serves_metrics_and_healthz_and_stops_when_dropped() {
    let rt = runtime();
    let server = rt.block_on(serve("127.0.0.1:0")).expect("binds");
    let addr = server.addr;
    assert_ne!(addr.port(), 0, "port 0 is replaced by the bound port");

    let (code, head, body) = get(addr, "GET", "/metrics");
    assert_eq!(code, 200, "{head}");
    assert!(
        head.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    // Coordinator and worker series are registered before the first scrape.
    assert!(
        body.contains("# TYPE farm_matches_scheduled gauge"),
        "{body}"
    );
    assert!(body.contains("# TYPE farm_worker_slots gauge"), "{body}");
    assert_eq!(get(addr, "GET", "/metrics?x=1").0, 200);

    let (code, _, body10) = exchange(addr, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
    assert_eq!(code, 200);
    assert!(body10.contains("farm_matches_scheduled"), "{body10}");

    let (code, head, body) = get(addr, "HEAD", "/metrics");
    assert_eq!(code, 200, "{head}");
    assert!(body.is_empty(), "HEAD answered with a body: {body}");

    let (code, _, body) = get(addr, "GET", "/healthz");
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    let (code, _, body) = get(addr, "GET", "/nothing");
    assert_eq!((code, body.as_str()), (404, "try /metrics\n"));
    assert_eq!(get(addr, "POST", "/metrics").0, 405);
    assert_eq!(get(addr, "DELETE", "/nothing").0, 405);

    drop(server);
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_ok() {
        assert!(
            Instant::now() < until,
            "{addr} still accepts connections after the server was dropped"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_refused_bind_names_the_address() {
    let rt = runtime();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let err = match rt.block_on(serve(&addr)) {
        Ok(s) => panic!("bound {} although it is taken", s.addr),
        Err(e) => e,
    };
    assert!(matches!(err, MetricsError::Bind { .. }));
    assert!(err.to_string().contains(&addr), "{err}");
    let err = rt.block_on(serve("not an address")).err().expect("refused");
    assert!(err.to_string().contains("not an address"), "{err}");
}
