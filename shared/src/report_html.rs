//! The tournament report page `report.html`: a pure function from the run's plain numbers
//! ([`Page`]: ratings with Wald and bootstrap intervals, the per-size table, head-to-head counts,
//! faults, arrival times, the stop or SPRT state) to one self-contained HTML document. Inline
//! CSS, inline SVG charts and a few lines of inline JS, no external resource, so it opens from
//! disk with no network. Every user string (bot names, fault details, reasons) is escaped; the
//! model itself is embedded as JSON in `<script type="application/json" id="report-data">` so
//! a test (or a script) can read the exact numbers the page shows. Match links point into the
//! per-folder viewer page, `replays/index.html#N`.
//! [`PageBuilder`] accumulates the per-match parts (head-to-head, faults, recent matches,
//! arrival times) incrementally, so a live refresh does not rescan the results.

mod build;
mod model;
mod svg;
mod workers;

use std::fmt::Write;

pub use build::PageBuilder;
pub use model::*;

/// Matches listed in full (seats, ranks, points) at the bottom of the page: the latest ones.
pub const RECENT_MATCHES: usize = 20;
/// Match links listed per (bot, fault kind).
pub const FAULT_LINKS: usize = 12;
/// Points kept of the progress curve (arrivals are thinned to at most this many).
pub const TIMELINE_POINTS: usize = 240;

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The model as JSON safe inside a `<script>` element (no `<`, so no `</script>`).
fn data_json(page: &Page) -> String {
    serde_json::to_string(page)
        .unwrap_or_else(|_| "null".to_string())
        .replace('<', "\\u003c")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `1234.5` → `"1234.50"`; not finite → "–".
fn f2(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".to_string()
    }
}

fn link(n: u64) -> String {
    format!("<a href=\"replays/index.html#{n}\">{n}</a>")
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.2em auto;max-width:1100px;\
padding:0 1em;color:#1b1f24;background:#fff}h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;\
margin:1.4em 0 .4em;border-bottom:1px solid #d0d7de}table{border-collapse:collapse;margin:.3em 0}\
td,th{padding:2px 8px;border-bottom:1px solid #eaeef2;text-align:right;white-space:nowrap}\
th{background:#f6f8fa}td.n,th.n{text-align:left;max-width:16em;overflow:hidden;text-overflow:ellipsis}\
.note{background:#fff8c5;border:1px solid #d4a72c;padding:.4em .7em;margin:.5em 0}\
.stop{background:#ffebe9;border-color:#cf222e}.muted{color:#57606a}.bar{height:10px;background:#d0d7de;\
border-radius:5px;overflow:hidden;max-width:420px}.bar>div{height:100%;background:#2da44e}\
svg text{font-size:11px;fill:#57606a}.h2h td{min-width:3.2em}a{color:#0969da}\
.links a{display:inline-block;min-width:2.6em}.kv td{text-align:left}td.bars,th.bars{text-align:center;width:320px}td.seats{text-align:left;white-space:normal}";

/// The whole page.
pub fn render(page: &Page) -> String {
    let mut o = String::with_capacity(64 * 1024 + page.numbers.len() * 48);
    let title = format!("{} — tournament report", page.title);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    header(&mut o, page);
    rule(&mut o, page);
    ratings(&mut o, page);
    progress(&mut o, page);
    per_size(&mut o, page);
    head_to_head(&mut o, page);
    faults(&mut o, page);
    workers(&mut o, page);
    matches(&mut o, page);
    let _ = write!(
        o,
        "<script type=\"application/json\" id=\"report-data\">{}</script>\n\
         <script>document.getElementById('open-match').addEventListener('submit',function(e){{\
         e.preventDefault();var n=parseInt(this.elements.n.value,10);\
         if(n>0)location.href='replays/index.html#'+n;}});</script>\n</body></html>\n",
        data_json(page)
    );
    o
}

fn header(o: &mut String, p: &Page) {
    let share = if p.matches_scheduled > 0 {
        p.matches_done as f64 / p.matches_scheduled as f64
    } else {
        0.0
    };
    let _ = writeln!(
        o,
        "<p><span id=\"done\">{}</span> of <span id=\"scheduled\">{}</span> matches done \
         ({:.1}%): <span id=\"games\">{}</span> results (<span id=\"invalid\">{}</span> not \
         counted), <span id=\"failed\">{}</span> failed. Anchor <b>{}</b> = 0.</p>\
         <div class=\"bar\" title=\"progress\"><div style=\"width:{:.2}%\"></div></div>",
        p.matches_done,
        p.matches_scheduled,
        share * 100.0,
        p.games,
        p.games_invalid,
        p.failed.len(),
        esc(&p.anchor),
        (share * 100.0).min(100.0)
    );
    if !p.not_compiled.is_empty() {
        let names: Vec<String> = p.not_compiled.iter().map(|n| esc(n)).collect();
        let _ = writeln!(
            o,
            "<p class=\"note\">Played with --allow-compile-failures: {} did not compile; \
             eliminated at turn 0 in each of their matches, which do not count.</p>",
            names.join(", ")
        );
    }
    if let Some(s) = &p.stop {
        let _ = writeln!(
            o,
            "<p class=\"note stop\" id=\"stopped\"><b>Stopped early:</b> {}; {} of {} scheduled \
             matches played ({} in flight cancelled).</p>",
            esc(&s.reason),
            s.matches_played,
            s.matches_scheduled,
            s.cancelled
        );
    }
}

fn rule(o: &mut String, p: &Page) {
    match &p.rule {
        None => {}
        Some(RuleState::Sprt {
            new,
            base,
            elo0,
            elo1,
            alpha,
            beta,
            max_pairs,
            pairs,
            void_pairs,
            pentanomial: c,
            llr,
            lower,
            upper,
            elo,
            elo_ci95,
            verdict,
        }) => {
            let _ = write!(
                o,
                "<h2>SPRT: {} vs {}</h2>\n<p id=\"sprt\"><b>{}</b> after {pairs} of at most \
                 {max_pairs} pairs ({void_pairs} void). H0 Elo {elo0}, H1 Elo {elo1}, α {alpha}, \
                 β {beta}. LLR <b>{:.3}</b> in [{:.3}, {:.3}]; Elo {:.1} (95% [{:.1}, {:.1}]); \
                 pentanomial LL {} LD {} DD+WL {} WD {} WW {}.</p>\n",
                esc(new),
                esc(base),
                esc(verdict),
                llr,
                lower,
                upper,
                elo,
                elo_ci95[0],
                elo_ci95[1],
                c[0],
                c[1],
                c[2],
                c[3],
                c[4]
            );
            o.push_str(&svg::llr_gauge(*llr, *lower, *upper));
        }
        Some(RuleState::UntilSettled {
            confidence,
            max_matches,
            adjacent,
        }) => {
            let _ =
                write!(
                o,
                "<h2>Until settled</h2>\n<p id=\"settle\">The run stops when every adjacent pair \
                 of the ranking is ordered in {:.1}% of the map-unit bootstrap resamples{}.</p>",
                confidence * 100.0,
                max_matches.map_or(String::new(), |m| format!(", or at match {m} at the latest"))
            );
            if !adjacent.is_empty() {
                o.push_str("<table><tr><th class=\"n\">Pair</th><th>Bootstrap intervals</th></tr>");
                for (hi, lo, apart) in adjacent {
                    let _ = write!(
                        o,
                        "<tr><td class=\"n\">{} &gt; {}</td><td>{}</td></tr>",
                        esc(hi),
                        esc(lo),
                        if *apart { "apart" } else { "overlap" }
                    );
                }
                o.push_str("</table>\n");
            }
        }
    }
}

fn ratings(o: &mut String, p: &Page) {
    o.push_str("<h2>Bradley–Terry ratings</h2>\n");
    let r = &p.ratings;
    if let Some(why) = &r.unavailable {
        let _ = writeln!(
            o,
            "<p id=\"ratings-unavailable\">No ratings yet: {}</p>",
            esc(why)
        );
        return;
    }
    let _ = writeln!(
        o,
        "<p class=\"muted\">95% intervals: Wald (grey: inverse Hessian, comparisons independent) \
         and paired map bootstrap (blue: whole maps resampled{}).</p>",
        match &r.bootstrap {
            Some(b) if b.games_used < p.games => format!(
                "; {} map units, {} of {} resamples fitted, seed {}; computed on the first {} of {} results",
                b.units, b.fitted, b.resamples, b.seed, b.games_used, p.games
            ),
            Some(b) => format!(
                "; {} map units, {} of {} resamples fitted, seed {}",
                b.units, b.fitted, b.resamples, b.seed
            ),
            None => format!(
                "; not available: {}",
                esc(r.bootstrap_unavailable.as_deref().unwrap_or("not computed"))
            ),
        }
    );
    let (lo, hi) = svg::extent(&r.rows);
    o.push_str(
        "<table id=\"ratings\"><tr><th>#</th><th class=\"n\">Bot</th><th>Rating</th>\
         <th>Wald 95%</th><th>Bootstrap 95%</th><th class=\"bars\">",
    );
    let _ = writeln!(
        o,
        "<span style=\"float:left\">{lo:.0}</span><span style=\"float:right\">{hi:.0}</span>\
         Interval (dashed: 0)</th></tr>"
    );
    for (i, row) in r.rows.iter().enumerate() {
        let boot = row.bootstrap.map_or("–".to_string(), |[a, b]| {
            format!(
                "<span class=\"blo\">{}</span> … <span class=\"bhi\">{}</span>",
                f2(a),
                f2(b)
            )
        });
        let _ = writeln!(
            o,
            "<tr data-name=\"{}\"><td>{}</td><td class=\"n\">{}</td><td class=\"rating\">{}</td>\
             <td><span class=\"wlo\">{}</span> … <span class=\"whi\">{}</span></td><td>{boot}</td>\
             <td class=\"bars\">{}</td></tr>",
            esc(&row.name),
            i + 1,
            esc(&row.name),
            f2(row.rating),
            f2(row.wald[0]),
            f2(row.wald[1]),
            svg::interval_bar(row, lo, hi)
        );
    }
    o.push_str("</table>\n");
}

fn progress(o: &mut String, p: &Page) {
    o.push_str("<h2>Progress and throughput</h2>\n");
    if p.timeline.len() < 2 {
        o.push_str("<p class=\"muted\">Not enough arrivals yet to draw.</p>\n");
        return;
    }
    o.push_str(&svg::progress_chart(&p.timeline, p.matches_scheduled));
    o.push_str(&svg::throughput_chart(&p.timeline));
}

fn per_size(o: &mut String, p: &Page) {
    if p.scoring == Scoring::WinDrawLoss {
        return per_size_wins(o, p);
    }
    o.push_str(
        "<h2>Per size</h2>\n<p class=\"muted\">Score = survival + 0.5 × kill share; averages \
         over valid games.</p>\n<table id=\"per-size\"><tr><th>Size</th><th class=\"n\">Bot</th>\
         <th>Valid games</th><th>Survival</th><th>Kill</th><th>Total</th><th>Sole first</th>\
         <th>First (ties)</th><th>Faulty games</th></tr>\n",
    );
    for r in &p.per_size {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"games\">{}</td><td>{:.3}</td>\
             <td>{:.3}</td><td>{:.3}</td><td>{:.1}%</td><td>{:.1}%</td><td>{}</td></tr>",
            r.size,
            esc(&r.name),
            r.games,
            r.survival,
            r.kill,
            r.points,
            r.sole_first,
            r.first,
            r.faulty
        );
    }
    o.push_str("</table>\n");
}

/// The per-size table of a game won (1), drawn (½) or lost (0).
fn per_size_wins(o: &mut String, p: &Page) {
    o.push_str(
        "<h2>Per size</h2>\n<p class=\"muted\">Score: a win 1, a draw 0.5, a loss 0; averages \
         over valid games.</p>\n<table id=\"per-size\"><tr><th>Size</th><th class=\"n\">Bot</th>\
         <th>Valid games</th><th>Score</th><th>Won</th><th>Won or drawn</th>\
         <th>Faulty games</th></tr>\n",
    );
    for r in &p.per_size {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"games\">{}</td><td>{:.3}</td>\
             <td>{:.1}%</td><td>{:.1}%</td><td>{}</td></tr>",
            r.size,
            esc(&r.name),
            r.games,
            r.points,
            r.sole_first,
            r.first,
            r.faulty
        );
    }
    o.push_str("</table>\n");
}

fn head_to_head(o: &mut String, p: &Page) {
    let h = &p.head_to_head;
    o.push_str(
        "<h2>Head to head</h2>\n<p class=\"muted\">Row bot finished ahead of column bot in \
         this many of the valid games both played (share in the tooltip; green: ahead more \
         often).</p>\n<table class=\"h2h\" id=\"h2h\"><tr><th></th>",
    );
    for n in &h.names {
        let _ = write!(o, "<th class=\"n\" title=\"{}\">{}</th>", esc(n), esc(n));
    }
    o.push_str("</tr>\n");
    for (i, a) in h.names.iter().enumerate() {
        let _ = write!(o, "<tr><th class=\"n\">{}</th>", esc(a));
        for (j, b) in h.names.iter().enumerate() {
            let (ahead, together) = (h.ahead[i][j], h.together[i][j]);
            if i == j || together == 0 {
                o.push_str("<td class=\"muted\">–</td>");
                continue;
            }
            let share = ahead as f64 / together as f64;
            // Red (behind) through white to green (ahead).
            let (r, g, bl) = if share >= 0.5 {
                let t = (share - 0.5) * 2.0;
                (255.0 - 120.0 * t, 255.0 - 40.0 * t, 255.0 - 120.0 * t)
            } else {
                let t = (0.5 - share) * 2.0;
                (255.0 - 20.0 * t, 255.0 - 120.0 * t, 255.0 - 120.0 * t)
            };
            let _ = write!(
                o,
                "<td style=\"background:rgb({:.0},{:.0},{:.0})\" title=\"{} ahead of {}: {} of {} ({:.1}%)\">{}/{}</td>",
                r,
                g,
                bl,
                esc(a),
                esc(b),
                ahead,
                together,
                share * 100.0,
                ahead,
                together
            );
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

fn faults(o: &mut String, p: &Page) {
    o.push_str("<h2>Faults</h2>\n");
    if p.faults.is_empty() {
        o.push_str("<p id=\"no-faults\">No bot faulted.</p>\n");
    } else {
        o.push_str(
            "<table id=\"faults\"><tr><th class=\"n\">Bot</th><th class=\"n\">Kind</th>\
             <th>Faults</th><th class=\"n\">Matches</th></tr>\n",
        );
        for f in &p.faults {
            let links: Vec<String> = f.matches.iter().map(|&n| link(n)).collect();
            let more = if (f.matches.len() as u64) < f.count {
                " …"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td>\
                 <td class=\"n links\">{}{more}</td></tr>",
                esc(&f.bot),
                esc(&f.kind),
                f.count,
                links.join(" ")
            );
        }
        o.push_str("</table>\n");
    }
    if !p.failed.is_empty() {
        o.push_str(
            "<h2>Failed matches (infrastructure, not scored)</h2>\n<table id=\"failed-matches\">\
             <tr><th>Match</th><th class=\"n\">Why</th></tr>\n",
        );
        for (n, why) in &p.failed {
            let _ = writeln!(o, "<tr><td>{n}</td><td class=\"n\">{}</td></tr>", esc(why));
        }
        o.push_str("</table>\n");
    }
}

fn workers(o: &mut String, p: &Page) {
    if p.workers.is_empty() {
        return;
    }
    o.push_str("<h2>Workers</h2>\n");
    if !p.quarantined.is_empty() {
        o.push_str("<ul id=\"quarantined\">\n");
        for e in &p.quarantined {
            let _ = writeln!(
                o,
                "<li class=\"note\"><b>Quarantined: {}</b>: {}; its later reports were refused and their matches played elsewhere.</li>",
                esc(&e.worker),
                esc(&e.to_string())
            );
        }
        o.push_str("</ul>\n");
    }
    o.push_str(
        "<table id=\"workers\"><tr><th class=\"n\">Worker</th>\
         <th>Speed (reference turns/s)</th><th>Matches</th><th>Bot faults</th>\
         <th>Reports without a result</th><th>Match seconds</th><th>Quarantined</th></tr>\n",
    );
    for w in &p.workers {
        let speed = w
            .speed
            .map_or_else(|| "—".to_string(), |s| format!("{s:.1}"));
        let quarantined = if p.quarantined.iter().any(|e| e.worker == w.worker) {
            "yes"
        } else {
            "—"
        };
        let _ = writeln!(
            o,
            "<tr><td class=\"n\">{}</td><td>{speed}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.1}</td><td>{quarantined}</td></tr>",
            esc(&w.worker),
            w.matches,
            w.bot_faults,
            w.failed,
            w.seconds
        );
    }
    o.push_str("</table>\n");
}

fn matches(o: &mut String, p: &Page) {
    o.push_str(
        "<h2>Matches</h2>\n<form id=\"open-match\">Open match <input name=\"n\" type=\"number\" \
         min=\"1\" style=\"width:6em\"> in the viewer <button>Open</button></form>\n",
    );
    let _ = writeln!(
        o,
        "<p class=\"muted\">The latest {} of {} results, newest first (rank, points, faults per seat).</p>\
         <table id=\"recent\"><tr><th>Match</th><th>Size</th><th class=\"n\">Seats</th></tr>",
        p.recent.len(),
        p.numbers.len()
    );
    for m in &p.recent {
        let seats: Vec<String> = m
            .seats
            .iter()
            .map(|s| {
                let f = if s.faults > 0 {
                    format!(
                        ", {} fault{}",
                        s.faults,
                        if s.faults == 1 { "" } else { "s" }
                    )
                } else {
                    String::new()
                };
                format!(
                    "{} <span class=\"muted\">#{} {:.2}{f}</span>",
                    esc(&s.name),
                    s.rank,
                    s.points
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"seats\">{}{}</td></tr>",
            link(m.number),
            m.size,
            seats.join(" · "),
            if m.valid { "" } else { " <b>(not counted)</b>" }
        );
    }
    o.push_str("</table>\n");
    let _ = write!(
        o,
        "<details><summary>All {} matches with a result</summary><p class=\"links\" id=\"all-matches\">",
        p.numbers.len()
    );
    for &n in &p.numbers {
        o.push_str(&link(n));
        o.push(' ');
    }
    o.push_str("</p></details>\n");
}

#[cfg(test)]
mod tests;
