use super::*;

fn row(n: u64) -> Row {
    Row {
        number: n,
        size: 2,
        result: Some(serde_json::json!({"ranks": [1, 2]})),
        failed: None,
    }
}

#[test]
fn a_retracted_result_is_played_again_and_a_failed_match_may_fail_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(LOG_NAME);
    let mut log = Log::open(&p, 0, &[]).unwrap();
    let failed = |n| Row {
        failed: Some("disk full".into()),
        result: None,
        ..row(n)
    };
    log.push(row(1)).unwrap();
    log.push(failed(2)).unwrap();
    log.sync().unwrap();
    assert!(
        log.retract(3, 2, "x").is_err(),
        "nothing saved to take back"
    );
    log.retract(1, 2, "its worker was quarantined").unwrap();
    log.allow_redo(2);
    assert!(!log.has(1) && !log.has(2));
    log.push(failed(2)).unwrap(); // played again, failed again
    log.push(Row {
        result: Some(serde_json::json!({"ranks": [2, 1]})),
        ..row(1)
    })
    .unwrap();
    log.sync().unwrap();
    drop(log);
    let rows = recover(&p, 10).unwrap().rows;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].result, Some(serde_json::json!({"ranks": [2, 1]})));
    assert_eq!(rows[1].failed.as_deref(), Some("disk full"));
    // A result written twice is still an edit, and so is a failure over a result that is
    // not a retraction.
    for second in [row(1), failed(1)] {
        let mut text = Vec::new();
        for r in [row(1), second] {
            serde_json::to_writer(&mut text, &r).unwrap();
            text.push(b'\n');
        }
        assert!(matches!(parse(&text, 10), Err(BadRow::OutOfOrder { .. })));
    }
    let r = Row::retraction(1, 2, "why");
    assert!(r.is_retraction() && !failed(1).is_retraction());
}

#[test]
fn writes_in_schedule_order_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(LOG_NAME);
    let mut log = Log::open(&p, 0, &[]).unwrap();
    assert!(log.push(row(2)).unwrap().is_empty());
    assert!(log.push(row(3)).unwrap().is_empty());
    let ready = log.push(row(1)).unwrap();
    assert_eq!(
        ready.iter().map(|r| r.number).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(
        log.push(row(2)).unwrap().is_empty(),
        "duplicates are ignored"
    );
    log.sync().unwrap();
    drop(log);
    let rec = recover(&p, 100).unwrap();
    assert_eq!(rec.rows.len(), 3);
    assert!(rec.torn_bytes.is_none());
}

#[test]
fn results_ahead_of_the_log_are_durable_before_their_turn() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(LOG_NAME);
    let mut log = Log::open(&p, 0, &[]).unwrap();
    assert!(log.push(row(3)).unwrap().is_empty());
    assert!(log.push(row(2)).unwrap().is_empty());
    log.sync().unwrap();
    // The coordinator dies here (after acking 2 and 3): they must not be lost.
    drop(log);
    let rec = recover(&p, 100).unwrap();
    assert!(rec.rows.is_empty());
    assert_eq!(
        rec.ahead.iter().map(|r| r.number).collect::<Vec<_>>(),
        [2, 3]
    );
    let mut log = Log::open(&p, 0, &rec.ahead).unwrap();
    assert_eq!(log.waiting_numbers(), [2, 3]);
    assert!(log.has(2) && log.has(3) && !log.has(1));
    let ready = log.push(row(1)).unwrap();
    assert_eq!(
        ready.iter().map(|r| r.number).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    log.sync().unwrap();
    assert_eq!(
        std::fs::metadata(ahead_path(&p)).unwrap().len(),
        0,
        "the journal is emptied once nothing waits"
    );
    drop(log);
    let rec = recover(&p, 100).unwrap();
    assert_eq!(rec.rows.len(), 3);
    assert!(rec.ahead.is_empty());
}

#[test]
fn a_torn_journal_line_is_ignored_and_rows_already_logged_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(LOG_NAME);
    let mut log = Log::open(&p, 0, &[]).unwrap();
    log.push(row(1)).unwrap();
    log.push(row(3)).unwrap();
    log.sync().unwrap();
    drop(log);
    let mut f = OpenOptions::new()
        .append(true)
        .open(ahead_path(&p))
        .unwrap();
    f.write_all(b"{\"match\":4,\"si").unwrap();
    drop(f);
    let rec = recover(&p, 100).unwrap();
    assert_eq!(rec.rows.len(), 1);
    assert_eq!(rec.ahead.len(), 1);
    assert_eq!(rec.ahead[0].number, 3);
    // A fresh run over the same folder starts with an empty journal.
    let log = Log::open(&p, 1, &[]).unwrap();
    assert!(log.waiting_numbers().is_empty());
    assert_eq!(std::fs::metadata(ahead_path(&p)).unwrap().len(), 0);
}

#[test]
fn torn_tail_is_cut_and_reported_but_damage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(LOG_NAME);
    let mut log = Log::open(&p, 0, &[]).unwrap();
    log.push(row(1)).unwrap();
    log.push(row(2)).unwrap();
    log.sync().unwrap();
    drop(log);
    let mut f = OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"{\"match\":3,\"si").unwrap();
    drop(f);
    let rec = recover(&p, 100).unwrap();
    assert_eq!(rec.rows.len(), 2);
    assert_eq!(rec.torn_bytes, Some(14));
    assert_eq!(
        recover(&p, 100).unwrap().torn_bytes,
        None,
        "file was repaired"
    );

    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replacen("\"match\":1", "\"match\":x", 1)).unwrap();
    let err = recover(&p, 100).err().unwrap().to_string();
    assert!(err.contains("line 1"), "{err}");
}
