//! The report page's inline SVG: one interval bar per rating (Wald and bootstrap on a shared
//! axis), the progress curve and the throughput line over time, and the SPRT's LLR gauge.

use std::fmt::Write;

use super::RatingRow;

/// The rating axis: every rating and interval end, padded, and 0 (the anchor) included.
pub fn extent(rows: &[RatingRow]) -> (f64, f64) {
    let mut lo = 0.0f64;
    let mut hi = 0.0f64;
    for r in rows {
        let mut vals = vec![r.rating, r.wald[0], r.wald[1]];
        if let Some(b) = r.bootstrap {
            vals.extend(b);
        }
        for v in vals.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if hi - lo < 1.0 {
        (lo - 1.0, hi + 1.0)
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    }
}

const BAR_W: f64 = 320.0;

/// One row's bar: the Wald interval (thin, grey), the bootstrap interval (thick, blue), the
/// rating (a dot) and the anchor's 0 (a dashed line).
pub fn interval_bar(r: &RatingRow, lo: f64, hi: f64) -> String {
    let x = |v: f64| {
        if v.is_finite() {
            ((v - lo) / (hi - lo) * BAR_W).clamp(0.0, BAR_W)
        } else {
            0.0
        }
    };
    let mut s = format!(
        "<svg width=\"{BAR_W}\" height=\"16\" role=\"img\"><line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"0\" \
         y2=\"16\" stroke=\"#8c959f\" stroke-dasharray=\"2,2\"/>",
        x(0.0)
    );
    let _ = write!(
        s,
        "<rect class=\"wald\" x=\"{:.1}\" y=\"9\" width=\"{:.1}\" height=\"4\" fill=\"#afb8c1\"/>",
        x(r.wald[0]),
        (x(r.wald[1]) - x(r.wald[0])).max(1.0)
    );
    if let Some([a, b]) = r.bootstrap {
        let _ = write!(
            s,
            "<rect class=\"boot\" x=\"{:.1}\" y=\"3\" width=\"{:.1}\" height=\"5\" rx=\"2\" fill=\"#218bff\"/>",
            x(a),
            (x(b) - x(a)).max(1.0)
        );
    }
    let _ = write!(
        s,
        "<circle cx=\"{:.1}\" cy=\"8\" r=\"3.5\" fill=\"#1b1f24\"/></svg>",
        x(r.rating)
    );
    s
}

const W: f64 = 720.0;
const H: f64 = 180.0;
const L: f64 = 56.0;
const B: f64 = 24.0;

fn axes(title: &str, t_max: f64, y_max: f64, y_fmt: &dyn Fn(f64) -> String) -> String {
    let mut s = format!(
        "<svg class=\"chart\" width=\"{W}\" height=\"{}\" role=\"img\" aria-label=\"{title}\">\
         <text x=\"{L}\" y=\"12\">{title}</text>",
        H + B + 16.0
    );
    for k in 0..=4 {
        let y = 16.0 + H - H * k as f64 / 4.0;
        let _ = write!(
            s,
            "<line x1=\"{L}\" x2=\"{W}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eaeef2\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            L - 4.0,
            y + 4.0,
            y_fmt(y_max * k as f64 / 4.0)
        );
    }
    for k in 0..=4 {
        let x = L + (W - L - 8.0) * k as f64 / 4.0;
        let _ = write!(
            s,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"{}\">{}</text>",
            16.0 + H + 16.0,
            if k == 4 { "end" } else { "middle" },
            duration(t_max * k as f64 / 4.0)
        );
    }
    s
}

/// "12 s", "4.5 min", "2.1 h".
fn duration(secs: f64) -> String {
    if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 7200.0 {
        format!("{:.1} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

fn point(t: f64, t_max: f64, v: f64, v_max: f64) -> (f64, f64) {
    let x = L + (W - L - 8.0) * if t_max > 0.0 { t / t_max } else { 0.0 };
    let y = 16.0 + H - H * if v_max > 0.0 { v / v_max } else { 0.0 };
    (x, y)
}

/// Matches done against time since the first arrival, up to the schedule's size.
pub fn progress_chart(timeline: &[(f64, u64)], scheduled: u64) -> String {
    let t0 = timeline[0].0;
    let t_max = timeline.last().map_or(0.0, |p| p.0 - t0).max(1.0);
    let y_max = scheduled.max(timeline.last().map_or(1, |p| p.1)).max(1) as f64;
    let mut s = axes("matches done", t_max, y_max, &|v| format!("{v:.0}"));
    let pts: Vec<String> = timeline
        .iter()
        .map(|&(t, d)| {
            let (x, y) = point(t - t0, t_max, d as f64, y_max);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = writeln!(
        s,
        "<polyline id=\"progress-line\" fill=\"none\" stroke=\"#2da44e\" stroke-width=\"2\" points=\"{}\"/></svg>",
        pts.join(" ")
    );
    s
}

/// Bins of the throughput line.
pub const THROUGHPUT_BINS: usize = 30;

/// Matches done at `t`, read off the timeline by linear interpolation.
fn done_at(timeline: &[(f64, u64)], t: f64) -> f64 {
    let i = timeline.partition_point(|p| p.0 <= t);
    if i == 0 {
        return timeline.first().map_or(0.0, |p| p.1 as f64);
    }
    if i == timeline.len() {
        return timeline[i - 1].1 as f64;
    }
    let (a, b) = (timeline[i - 1], timeline[i]);
    a.1 as f64 + (b.1 as f64 - a.1 as f64) * (t - a.0) / (b.0 - a.0)
}

/// Matches per minute in [`THROUGHPUT_BINS`] equal spans of the run's time (arrivals come in
/// batches, so rates between single arrivals would be noise): `(end of span, rate)`, the
/// span's end counted from the first arrival.
pub fn throughput(timeline: &[(f64, u64)]) -> Vec<(f64, f64)> {
    let (Some(first), Some(last)) = (timeline.first(), timeline.last()) else {
        return Vec::new();
    };
    let span = last.0 - first.0;
    if span <= 0.0 {
        return Vec::new();
    }
    let w = span / THROUGHPUT_BINS as f64;
    (0..THROUGHPUT_BINS)
        .map(|k| {
            let a = first.0 + w * k as f64;
            let b = if k + 1 == THROUGHPUT_BINS {
                last.0
            } else {
                a + w
            };
            let rate = (done_at(timeline, b) - done_at(timeline, a)) / (b - a) * 60.0;
            (b - first.0, rate)
        })
        .collect()
}

/// Throughput (matches per minute) over time.
pub fn throughput_chart(timeline: &[(f64, u64)]) -> String {
    let rates = throughput(timeline);
    let t_max = timeline
        .last()
        .map_or(0.0, |p| p.0 - timeline[0].0)
        .max(1.0);
    let y_max = rates.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let mut s = axes("throughput (matches / min)", t_max, y_max, &|v| {
        if y_max < 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.0}")
        }
    });
    let pts: Vec<String> = rates
        .iter()
        .map(|&(t, r)| {
            let (x, y) = point(t, t_max, r, y_max);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = writeln!(
        s,
        "<polyline id=\"throughput-line\" fill=\"none\" stroke=\"#218bff\" stroke-width=\"1.5\" points=\"{}\"/></svg>",
        pts.join(" ")
    );
    s
}

/// The LLR between its two bounds.
pub fn llr_gauge(llr: f64, lower: f64, upper: f64) -> String {
    let w = 420.0;
    let x = |v: f64| ((v - lower) / (upper - lower) * w).clamp(0.0, w);
    format!(
        "<svg width=\"{}\" height=\"30\" role=\"img\" aria-label=\"LLR\"><rect x=\"10\" y=\"8\" \
         width=\"{w}\" height=\"8\" fill=\"#eaeef2\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"4\" \
         y2=\"20\" stroke=\"#8c959f\"/><circle cx=\"{:.1}\" cy=\"12\" r=\"5\" fill=\"#cf222e\"/>\
         <text x=\"10\" y=\"29\">H0 {lower:.2}</text><text x=\"{}\" y=\"29\" text-anchor=\"end\">\
         H1 {upper:.2}</text></svg>\n",
        w + 20.0,
        10.0 + x(0.0),
        10.0 + x(0.0),
        10.0 + x(if llr.is_finite() { llr } else { 0.0 }),
        w + 10.0
    )
}
