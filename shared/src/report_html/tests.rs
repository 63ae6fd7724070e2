use super::*;
use crate::results::GameResult;

fn game(names: &[&str], ranks: &[i64], valid: bool) -> GameResult {
    GameResult {
        size: names.len(),
        valid_for_scoring: valid,
        names: names.iter().map(|s| s.to_string()).collect(),
        ranks: ranks.to_vec(),
        survival_points: vec![1.0; names.len()],
        kill_points: vec![0.5; names.len()],
        points: ranks.iter().map(|&r| 3.0 - r as f64).collect(),
        errors: vec![0; names.len()],
    }
}

/// The JSON blob of a rendered page, parsed back.
fn blob(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"report-data\">";
    let at = html.find(open).expect("a data blob") + open.len();
    let end = at + html[at..].find("</script>").expect("closed");
    serde_json::from_str(&html[at..end]).expect("the blob is JSON")
}

#[test]
fn an_empty_tournament_renders_a_whole_page() {
    let page = Page {
        title: "empty".into(),
        anchor: "Base".into(),
        roster: vec!["Base".into(), "Other".into()],
        sizes: vec![2],
        matches_scheduled: 10,
        ratings: Ratings {
            unavailable: Some("size 2 has no valid game".into()),
            ..Ratings::default()
        },
        ..Page::default()
    };
    let mut page = page;
    PageBuilder::new(&page.roster.clone()).fill(&mut page);
    let html = render(&page);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));
    assert!(html.contains("<span id=\"done\">0</span> of <span id=\"scheduled\">10</span>"));
    assert!(html.contains("No ratings yet: size 2 has no valid game"));
    assert!(html.contains("Not enough arrivals yet"));
    assert!(html.contains("No bot faulted."));
    assert_eq!(blob(&html)["matches_scheduled"], 10);
    // Nothing outside the page.
    for bad in ["http://", "https://", "src=", "<link", "@import"] {
        assert!(!html.contains(bad), "{bad} in the page");
    }
}

#[test]
fn every_user_string_is_escaped_and_the_blob_cannot_close_its_script() {
    let evil = "</script><b x=\"1\">&'雷";
    let mut b = PageBuilder::new(&[evil, "Base"]);
    b.add(
        1,
        &game(&[evil, "Base"], &[1, 2], true),
        &[vec!["timeout".into()], vec![]],
    );
    // A worker may name itself anything too.
    b.played(1, evil, Some(300.0), 1.0, true);
    b.played(2, evil, Some(300.0), 0.0, false);
    let mut page = Page {
        title: format!("run {evil}"),
        anchor: "Base".into(),
        roster: vec![evil.into(), "Base".into()],
        sizes: vec![2],
        matches_scheduled: 1,
        matches_done: 1,
        games: 1,
        failed: vec![(2, format!("worker said {evil}"))],
        stop: Some(StopInfo {
            reason: format!("because {evil}"),
            matches_played: 1,
            matches_scheduled: 2,
            cancelled: 0,
        }),
        not_compiled: vec![evil.into()],
        quarantined: vec![crate::quarantine::Evidence {
            worker: evil.into(),
            test: crate::quarantine::Test::BotFaults,
            observed: 9,
            trials: 10,
            expected: 0.4,
            p_value: 1e-9,
            threshold: 1e-6,
            reports: 5,
        }],
        ratings: Ratings {
            rows: vec![RatingRow {
                name: evil.into(),
                rating: 12.5,
                wald: [1.0, 24.0],
                bootstrap: Some([3.0, 20.0]),
            }],
            ..Ratings::default()
        },
        ..Page::default()
    };
    b.fill(&mut page);
    let html = render(&page);
    let body = &html[..html.find("<script type=\"application/json\"").unwrap()];
    assert!(!body.contains(evil), "a raw name in the page");
    assert!(!body.contains("<b x="), "markup from a name");
    assert!(body.contains("&lt;/script&gt;&lt;b x=&quot;1&quot;&gt;&amp;&#39;雷"));
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "only the page's own scripts close"
    );
    let data = blob(&html);
    assert_eq!(data["roster"][0], evil, "the blob keeps the exact name");
    assert_eq!(data["faults"][0]["bot"], evil);
    assert_eq!(data["faults"][0]["kind"], "timeout");
    assert!(body.contains("<table id=\"workers\">"), "no workers table");
    assert!(
        body.contains("<b>Quarantined: &lt;/script&gt;")
            && body.contains(
                "9 of 10 seats with a bot fault where the rest of the fleet predicts 0.40"
            ),
        "no quarantine note"
    );
    assert!(
        body.contains("<td>yes</td></tr>"),
        "the worker's row says quarantined"
    );
    let w = &data["workers"][0];
    assert_eq!(w["worker"], evil);
    assert_eq!(
        (
            w["matches"].as_u64(),
            w["bot_faults"].as_u64(),
            w["failed"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
}

#[test]
fn the_numbers_are_on_the_page_and_in_the_blob() {
    let roster = ["Base", "Greedy", "Random"];
    let mut b = PageBuilder::new(&roster);
    b.add(
        1,
        &game(&["Base", "Greedy"], &[2, 1], true),
        &[vec![], vec![]],
    );
    b.add(
        2,
        &game(&["Greedy", "Random"], &[1, 2], true),
        &[vec![], vec!["crash".into()]],
    );
    b.add(
        3,
        &game(&["Random", "Base"], &[1, 1], true),
        &[vec![], vec![]],
    );
    b.add(
        4,
        &game(&["Random", "Greedy"], &[1, 2], false),
        &[vec!["start_failure".into()], vec![]],
    );
    for (n, t) in [(1, 100.0), (2, 110.0), (3, 130.0), (4, 160.0)] {
        b.arrived(n, t);
    }
    let mut page = Page {
        title: "t".into(),
        anchor: "Base".into(),
        roster: roster.iter().map(|s| s.to_string()).collect(),
        sizes: vec![2],
        matches_scheduled: 6,
        matches_done: 4,
        games: 4,
        games_invalid: 1,
        ratings: Ratings {
            rows: vec![
                RatingRow {
                    name: "Greedy".into(),
                    rating: 123.456,
                    wald: [50.0, 200.0],
                    bootstrap: Some([60.126, 190.0]),
                },
                RatingRow {
                    name: "Base".into(),
                    rating: 0.0,
                    wald: [0.0, 0.0],
                    bootstrap: Some([0.0, 0.0]),
                },
            ],
            bootstrap: Some(BootInfo {
                units: 3,
                resamples: 1000,
                fitted: 990,
                seed: 7,
                games_used: 4,
            }),
            ..Ratings::default()
        },
        ..Page::default()
    };
    b.fill(&mut page);
    let html = render(&page);
    assert!(html.contains("<td class=\"rating\">123.46</td>"));
    assert!(html.contains("<span class=\"wlo\">50.00</span> … <span class=\"whi\">200.00</span>"));
    assert!(html.contains("<span class=\"blo\">60.13</span>"));
    assert!(html.contains("3 map units, 990 of 1000 resamples fitted, seed 7"));
    // Head to head: Greedy beat Base once, Base and Random tied once (not ahead either way),
    // the invalid match 4 does not count.
    let h = &page.head_to_head;
    assert_eq!(h.names, roster);
    assert_eq!((h.ahead[1][0], h.together[1][0]), (1, 1));
    assert_eq!((h.ahead[0][2], h.ahead[2][0], h.together[0][2]), (0, 0, 1));
    assert_eq!((h.ahead[1][2], h.together[1][2]), (1, 1));
    assert!(html.contains("title=\"Greedy ahead of Base: 1 of 1 (100.0%)\">1/1</td>"));
    // Faults by bot and kind, with links into the viewer.
    let kinds: Vec<(String, String, u64)> = page
        .faults
        .iter()
        .map(|f| (f.bot.clone(), f.kind.clone(), f.count))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Random".into(), "crash".into(), 1),
            ("Random".into(), "start_failure".into(), 1)
        ]
    );
    assert!(html.contains("<a href=\"replays/index.html#2\">2</a>"));
    // Every match linked, the newest first in the recent list.
    assert_eq!(page.numbers, [1, 2, 3, 4]);
    assert_eq!(page.recent[0].number, 4);
    assert!(html.contains("(not counted)"));
    // Progress and throughput: 4 arrivals over 60 s.
    assert_eq!(
        page.timeline,
        [(100.0, 1), (110.0, 2), (130.0, 3), (160.0, 4)]
    );
    let rates = svg::throughput(&page.timeline);
    assert_eq!(rates.len(), svg::THROUGHPUT_BINS);
    // 2 s spans: the first has 0.2 arrivals (of the 10 s to the 2nd), i.e. 6 a minute.
    assert!(
        (rates[0].0 - 2.0).abs() < 1e-9 && (rates[0].1 - 6.0).abs() < 1e-9,
        "{rates:?}"
    );
    assert!((rates[29].1 - 2.0).abs() < 1e-9, "{rates:?}");
    assert!(html.contains("id=\"progress-line\""));
    assert!(html.contains("id=\"throughput-line\""));
    let data = blob(&html);
    assert_eq!(data["ratings"]["rows"][0]["rating"], 123.456);
    assert_eq!(data["numbers"].as_array().unwrap().len(), 4);
}

#[test]
fn a_long_timeline_is_thinned_but_keeps_its_ends() {
    let mut b = PageBuilder::new(&["A"]);
    for n in 1..=10_000u64 {
        b.arrived(n, n as f64);
    }
    let t = b.timeline();
    assert!(t.len() <= TIMELINE_POINTS + 1, "{}", t.len());
    assert_eq!(t[0], (1.0, 1));
    assert_eq!(*t.last().unwrap(), (10_000.0, 10_000));
    // A redone match keeps only its later arrival.
    b.arrived(5, 20_000.0);
    assert_eq!(*b.timeline().last().unwrap(), (20_000.0, 10_000));
}

#[test]
fn the_sprt_state_is_shown() {
    let page = Page {
        rule: Some(RuleState::Sprt {
            new: "New<1>".into(),
            base: "Base".into(),
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
            max_pairs: 100,
            pairs: 7,
            void_pairs: 1,
            pentanomial: [1, 0, 3, 1, 1],
            llr: 0.4321,
            lower: -2.944,
            upper: 2.944,
            elo: 35.0,
            elo_ci95: [-20.0, 90.0],
            verdict: "running".into(),
        }),
        ratings: Ratings {
            unavailable: Some("x".into()),
            ..Ratings::default()
        },
        ..Page::default()
    };
    let html = render(&page);
    assert!(html.contains("SPRT: New&lt;1&gt; vs Base"));
    assert!(html.contains("LLR <b>0.432</b> in [-2.944, 2.944]"));
    assert!(html.contains("<b>running</b> after 7 of at most 100 pairs"));
    assert_eq!(blob(&html)["rule"]["rule"], "sprt");
}
