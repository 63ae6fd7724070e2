//! Grafana dashboards and provisioning: structure, datasource uids, unique dashboard uids and
//! panel ids, the compose mounts Grafana reads them from, and every metric their queries use is
//! one this build defines (the live check of the queries is metrics_prometheus.rs).

mod common;
mod metrics_yaml;

use std::collections::BTreeSet;

use serde_json::Value;

use common::repo;
use metrics_yaml::yaml;

fn dashboards() -> Vec<(String, Value)> {
    let dir = repo().join("grafana/dashboards");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("grafana/dashboards exists") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", p.display()));
            out.push((p.file_name().unwrap().to_string_lossy().to_string(), v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every metric family name this build exports (coordinator and worker library).
fn defined_metrics() -> BTreeSet<String> {
    // Families with labels are exported once they have a series: give each one.
    let c = coordinator::metrics::global();
    c.start("test", "test", 1, 0, &["bot".to_string()]);
    for g in [&c.rating, &c.rating_low, &c.rating_high] {
        g.with_label_values(&["bot"]).set(0.0);
    }
    let w = worker::metrics::global();
    w.faults.with_label_values(&["crash", "bot"]);
    w.turn_seconds.with_label_values(&["bomberman", "2"]);
    w.match_seconds.with_label_values(&["bomberman", "2"]);
    let mut names = BTreeSet::new();
    for fam in prometheus::gather() {
        let n = fam.get_name().to_string();
        if fam.get_field_type() == prometheus::proto::MetricType::HISTOGRAM {
            for s in ["_bucket", "_sum", "_count"] {
                names.insert(format!("{n}{s}"));
            }
        } else {
            names.insert(n);
        }
    }
    names
}

/// Identifiers in a PromQL expression that look like metric names of ours (`farm_...`) or of
/// RabbitMQ (`rabbitmq_...`).
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in expr.chars().chain(std::iter::once(' ')) {
        if c == '"' {
            quoted = !quoted;
        }
        if !quoted && (c.is_ascii_alphanumeric() || c == '_') {
            cur.push(c);
        } else {
            if cur.starts_with("farm_") || cur.starts_with("rabbitmq_") {
                out.push(cur.clone());
            }
            cur.clear();
        }
    }
    out
}

#[test]
fn dashboards_and_provisioning_are_consistent() {
    let ds = yaml("grafana/provisioning/datasources/prometheus.yml");
    assert_eq!(ds["apiVersion"], 1);
    let sources = ds["datasources"].as_array().expect("datasources list");
    let uids: BTreeSet<&str> = sources
        .iter()
        .map(|s| {
            assert_eq!(s["type"], "prometheus", "{s}");
            assert!(
                s["url"].as_str().is_some_and(|u| u.starts_with("http")),
                "{s}"
            );
            s["uid"].as_str().expect("datasource uid")
        })
        .collect();
    assert_eq!(uids.len(), sources.len(), "datasource uids must be unique");

    let prov = yaml("grafana/provisioning/dashboards/matchfarm.yml");
    assert_eq!(prov["apiVersion"], 1);
    let providers = prov["providers"].as_array().expect("providers list");
    assert_eq!(providers.len(), 1);
    assert_eq!(providers[0]["type"], "file");
    let path = providers[0]["options"]["path"]
        .as_str()
        .expect("provider path");
    // The compose file mounts grafana/dashboards exactly there.
    let compose = yaml("deploy/docker-compose.yml");
    let mounts: Vec<&str> = compose["services"]["grafana"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        mounts.contains(&format!("../grafana/dashboards:{path}:ro").as_str()),
        "grafana must mount ../grafana/dashboards at {path}: {mounts:?}"
    );
    assert!(mounts.contains(&"../grafana/provisioning:/etc/grafana/provisioning:ro"));

    let defined = defined_metrics();
    let boards = dashboards();
    let wanted = ["farm-faults", "farm-overview", "farm-queue", "farm-workers"];
    let got: BTreeSet<&str> = boards
        .iter()
        .map(|(_, d)| d["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        got,
        wanted.into_iter().collect(),
        "one dashboard per view, unique uids"
    );
    let mut exprs = 0;
    for (file, d) in &boards {
        assert!(
            d["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{file}: title"
        );
        assert!(
            d["schemaVersion"].as_u64().is_some(),
            "{file}: schemaVersion"
        );
        let panels = d["panels"]
            .as_array()
            .unwrap_or_else(|| panic!("{file}: panels"));
        assert!(!panels.is_empty(), "{file}: no panels");
        let mut ids = BTreeSet::new();
        for p in panels {
            let id = p["id"]
                .as_u64()
                .unwrap_or_else(|| panic!("{file}: panel without id"));
            assert!(ids.insert(id), "{file}: panel id {id} twice");
            let title = p["title"].as_str().unwrap_or("");
            assert!(!title.is_empty(), "{file}: panel {id} has no title");
            for k in ["h", "w", "x", "y"] {
                assert!(
                    p["gridPos"][k].as_u64().is_some(),
                    "{file}/{title}: gridPos.{k}"
                );
            }
            let puid = p["datasource"]["uid"].as_str().unwrap_or("");
            assert!(
                uids.contains(puid),
                "{file}/{title}: datasource uid {puid:?} not provisioned"
            );
            let targets = p["targets"]
                .as_array()
                .unwrap_or_else(|| panic!("{file}/{title}: targets"));
            assert!(!targets.is_empty(), "{file}/{title}: no targets");
            let mut refs = BTreeSet::new();
            for t in targets {
                assert!(
                    refs.insert(t["refId"].as_str().unwrap_or("")),
                    "{file}/{title}: refId twice"
                );
                let tuid = t["datasource"]["uid"].as_str().unwrap_or(puid);
                assert!(
                    uids.contains(tuid),
                    "{file}/{title}: target datasource {tuid:?}"
                );
                let expr = t["expr"].as_str().unwrap_or("");
                assert!(!expr.trim().is_empty(), "{file}/{title}: empty expr");
                assert!(
                    !expr.contains('$'),
                    "{file}/{title}: unresolved variable in {expr}"
                );
                let names = metric_names(expr);
                assert!(!names.is_empty(), "{file}/{title}: no metric in {expr}");
                for n in names {
                    assert!(
                        n.starts_with("rabbitmq_") || defined.contains(&n),
                        "{file}/{title}: {n} is not a metric this build defines"
                    );
                }
                exprs += 1;
            }
        }
    }
    assert!(exprs >= 30, "only {exprs} expressions");
}
