//! `ratios.svg`: a hand-written bar chart of each sample's ratios on a logarithmic axis.
//!
//! Deterministic: the same report gives the same bytes (fixed-precision numbers, suite order).

use std::fmt::Write;

use crate::Report;

/// The three bars per sample: label, colour, value.
fn bars(s: &crate::SampleResult) -> [(&'static str, &'static str, f64); 3] {
    let first = s.configurations.first();
    [
        (
            "rpt ÷ native i386 (instructions)",
            "#4c72b0",
            first.map_or(0.0, |c| c.ratio_native_i386),
        ),
        (
            "rpt ÷ native x86-64 (instructions)",
            "#55a868",
            first.map_or(0.0, |c| c.ratio_native_x86_64),
        ),
        (
            "rpt ÷ qemu-user (wall clock, median)",
            "#c44e52",
            s.qemu.summary.median_ratio,
        ),
    ]
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The chart: one group of horizontal bars per sample; the axis is log2, with 1 (parity) marked.
pub fn ratios_svg(report: &Report) -> String {
    const LEFT: f64 = 150.0;
    const WIDTH: f64 = 520.0;
    const BAR: f64 = 14.0;
    const GROUP_GAP: f64 = 14.0;
    const TOP: f64 = 40.0;
    // The axis spans 2^MIN_EXP ..= 2^MAX_EXP, widened to fit every value.
    let values: Vec<f64> = report
        .samples
        .iter()
        .flat_map(|s| bars(s).map(|b| b.2))
        .filter(|v| *v > 0.0)
        .collect();
    let min_exp = values
        .iter()
        .map(|v| v.log2().floor() as i32)
        .min()
        .unwrap_or(0)
        .min(-1);
    let max_exp = values.iter().map(|v| v.log2().ceil() as i32).max().unwrap_or(0).max(1);
    let span = f64::from(max_exp - min_exp);
    let x_of = |v: f64| LEFT + (v.log2() - f64::from(min_exp)) / span * WIDTH;
    let group = 3.0 * BAR + GROUP_GAP;
    let plot_height = group * report.samples.len() as f64;
    let legend_top = TOP + plot_height + 30.0;
    let height = legend_top + 3.0 * 18.0 + 10.0;
    let total_width = LEFT + WIDTH + 60.0;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total_width:.0}" height="{height:.0}" viewBox="0 0 {total_width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="18" font-size="13" font-weight="bold">rpt ÷ peers per sample (log scale; left of 1 means rpt is cheaper)</text>"#
    );
    for e in min_exp..=max_exp {
        let v = 2f64.powi(e);
        let x = x_of(v);
        let stroke = if e == 0 { "#000" } else { "#ddd" };
        let _ = writeln!(
            svg,
            r#"<line x1="{x:.1}" y1="{TOP:.1}" x2="{x:.1}" y2="{:.1}" stroke="{stroke}"/>"#,
            TOP + plot_height
        );
        let label = if e >= 0 {
            format!("{}", 1u64 << e)
        } else {
            format!("1/{}", 1u64 << -e)
        };
        let _ = writeln!(
            svg,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            TOP + plot_height + 14.0
        );
    }
    for (i, s) in report.samples.iter().enumerate() {
        let y0 = TOP + group * i as f64;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y0 + 1.5 * BAR + 4.0,
            escape(&s.name)
        );
        for (k, (_, colour, value)) in bars(s).iter().enumerate() {
            if value.is_nan() || *value <= 0.0 {
                continue;
            }
            let y = y0 + BAR * k as f64;
            let (a, b) = (x_of(1.0), x_of(*value));
            let (x, w) = if b >= a { (a, b - a) } else { (b, a - b) };
            let _ = writeln!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="{colour}"/>"#,
                BAR - 2.0
            );
            let (tx, anchor) = if b >= a { (b + 3.0, "start") } else { (b - 3.0, "end") };
            let _ = writeln!(
                svg,
                r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" font-size="10">{value:.2}</text>"#,
                y + BAR - 4.0
            );
        }
    }
    if let Some(first) = report.samples.first() {
        for (k, (label, colour, _)) in bars(first).iter().enumerate() {
            let y = legend_top + 18.0 * k as f64;
            let _ = writeln!(
                svg,
                r#"<rect x="{LEFT}" y="{y:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                LEFT + 18.0,
                y + 10.0,
                escape(label)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}
