//! report.html and compare.html in a real browser. Headless Chromium loads the pages of recorded
//! H200 runs in windows 1280 and 800 px wide, every `<details>` opened, and the page measures
//! itself (a script this test adds to a copy; the pages have none). The rules, each with a page
//! built to break it (`the_checks_catch_every_broken_rule`):
//! - no console errors; nothing wider than the window outside a box that scrolls;
//! - no visible text below 12 px as drawn, a plot's text scaled with its plot;
//! - every plot names its kind (`<svg class>`) and has a legend; a chart of values does not start
//!   its axis at 0 unless a bar reaches 0; a chart of ratios spans 1 and has its band;
//! - every row of a bar chart is labelled and holds a bar, no text is empty or cut at the plot's
//!   edge, and the legend covers no bar;
//! - the Summary is the first section, above the clocks;
//! - the timeline is there exactly when the run traced variants.
//!
//! Screenshots at both widths are kept under target/report-browser/.
//!
//! Without Chromium at build time the tests are ignored with the reason (build.rs), unless
//! TILEPIPE_REQUIRE_BROWSER is set (CI installs Chromium and sets it), when they fail.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tilepipe::evidence::sass::{EXCERPT_LINES, bounded_excerpt};
use tilepipe::render::{compare, html};

type RunResults = tilepipe::results::RunResults<serde_json::Value>;

/// The widths every page is judged at.
const WIDTHS: [u32; 2] = [1280, 800];

/// Collects errors from the first moment: uncaught ones and console.error.
const CAPTURE: &str = "<script>window.__errors=[];\
addEventListener('error',function(e){__errors.push(String(e.message))});\
(function(f){console.error=function(){__errors.push(Array.from(arguments).join(' '));f.apply(console,arguments)}})(console.error);\
</script>";

/// Opens every `<details>`, then measures and writes the findings as JSON into `<pre id=selftest>`.
const CHECK: &str = r#"<script>(function(){
document.querySelectorAll('details').forEach(function(d){d.open=true});
var W=innerWidth,out={errors:__errors,viewport:W,scroll_width:document.documentElement.scrollWidth,wide:[],small:[],plots:[]};
function scrolls(e){for(var p=e.parentElement;p;p=p.parentElement){var o=getComputedStyle(p).overflowX;if(o=='auto'||o=='scroll')return true}return false}
function name(e){return e.tagName+'.'+(e.getAttribute('class')||'')}
document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();
if(r.right>W+1&&!scrolls(e))out.wide.push(name(e)+' right '+Math.round(r.right))});
var walk=document.createTreeWalker(document.body,NodeFilter.SHOW_TEXT),n;
while((n=walk.nextNode())){var e=n.parentElement,t=n.textContent.trim();
if(!t||!e.getClientRects().length||getComputedStyle(e).visibility=='hidden')continue;
var px=parseFloat(getComputedStyle(e).fontSize);
if(e instanceof SVGElement){var m=e.getScreenCTM();px*=Math.sqrt(m.a*m.a+m.b*m.b)}
if(px<12)out.small.push(name(e)+' '+px.toFixed(1)+' px: '+t.slice(0,40))}
function box(e){var r=e.getBoundingClientRect();return [r.left,r.top,r.right,r.bottom]}
function overlap(a,b){return a[0]<b[2]-0.5&&b[0]<a[2]-0.5&&a[1]<b[3]-0.5&&b[1]<a[3]-0.5}
Array.from(document.querySelectorAll('svg')).filter(function(s){return !s.parentElement.closest('svg')}).forEach(function(s){
var texts=Array.from(s.querySelectorAll('text')),outside=texts.filter(function(t){return !t.closest('g.legend')});
var bars=Array.from(s.querySelectorAll('g.bars rect')).map(box),legend=s.querySelector('g.legend');
var labels=outside.filter(function(t){return t.getAttribute('text-anchor')=='end'&&t.textContent.trim()});
out.plots.push({kind:s.getAttribute('class')||'',
title:(texts[0]?texts[0].textContent:'').trim().slice(0,60),
legend:!!(legend&&legend.querySelector('text')),
ticks:outside.map(function(t){return t.textContent.trim()}).filter(function(t){return /^-?\d+(\.\d+)?$/.test(t)}).map(Number),
bar_widths:bars.map(function(b){return b[2]-b[0]}),
band:Array.from(s.querySelectorAll('g.band rect')).some(function(r){return r.getBoundingClientRect().width>0}),
empty_texts:texts.filter(function(t){return !t.textContent.trim()}).length,
labels:labels.map(function(t){return t.textContent.trim()}),
rows_without_bar:labels.filter(function(t){var b=box(t),y=(b[1]+b[3])/2;return !bars.some(function(r){return r[1]<=y&&y<=r[3]})}).length,
legend_over_bars:!!legend&&bars.some(function(r){return overlap(box(legend),r)}),
cut:texts.filter(function(t){var b=box(t),o=box(s);return t.textContent.trim()&&(b[0]<o[0]-1||b[1]<o[1]-1||b[2]>o[2]+1||b[3]>o[3]+1)}).map(function(t){return t.textContent.trim().slice(0,40)})})});
out.headings=Array.from(document.querySelectorAll('h2')).map(function(h){return h.id});
out.timeline=!!document.querySelector('#timeline ~ figure.plot svg g.legend');
var p=document.createElement('pre');p.id='selftest';p.textContent=JSON.stringify(out);document.body.appendChild(p)})()</script>"#;

#[derive(Debug, Deserialize)]
struct Plot {
    kind: String,
    title: String,
    legend: bool,
    ticks: Vec<f64>,
    bar_widths: Vec<f64>,
    band: bool,
    empty_texts: usize,
    labels: Vec<String>,
    rows_without_bar: usize,
    legend_over_bars: bool,
    /// Texts that run past the plot's edge, where the SVG cuts them.
    cut: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Findings {
    errors: Vec<String>,
    viewport: u32,
    scroll_width: u32,
    wide: Vec<String>,
    small: Vec<String>,
    plots: Vec<Plot>,
    headings: Vec<String>,
    timeline: bool,
}

/// Chromium, which build.rs found (or CI requires): its absence now is a failure.
fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
        .expect("Chromium, found at build time (or TILEPIPE_REQUIRE_BROWSER is set), is missing")
}

/// Runs Chromium headless on `url` with `args`, in a fresh profile, closed off from the network;
/// returns stdout and stderr.
fn browse(chromium: &Path, url: &str, args: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(err.reopen().unwrap())
        .spawn()
        .unwrap();
    // a bound on a hung browser, not a measurement
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("chromium did not finish within 120 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |f: &tempfile::NamedTempFile| std::fs::read_to_string(f.path()).unwrap();
    let (stdout, stderr) = (read(&out), read(&err));
    assert!(status.success(), "chromium on {url}: {status}\n{stderr}");
    (stdout, stderr)
}

/// Loads a copy of `page` with the checking scripts in a window `width` px wide and returns what
/// the page found, plus the console messages Chromium logged.
fn check(chromium: &Path, page: &str, file: &Path, width: u32) -> (Findings, Vec<String>) {
    let with_checks = page
        .replacen("<head>", &format!("<head>{CAPTURE}"), 1)
        .replacen("</body>", &format!("{CHECK}</body>"), 1);
    assert_ne!(with_checks, page, "the page has a head and a body");
    std::fs::write(file, with_checks).unwrap();
    let url = format!("file://{}", file.display());
    let window = format!("--window-size={width},1000");
    let (dom, log) = browse(chromium, &url, &[&window, "--dump-dom"]);
    let json = dom
        .split_once("<pre id=\"selftest\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .unwrap_or_else(|| panic!("the page's check wrote nothing; chromium said:\n{log}"))
        .0
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let findings: Findings = serde_json::from_str(&json).unwrap();
    assert_eq!(findings.viewport, width);
    (findings, console)
}

fn target() -> PathBuf {
    // CARGO_TARGET_TMPDIR is target/tmp
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    std::fs::create_dir_all(dir.join("report-browser")).unwrap();
    dir.join("report-browser")
}

fn fixture(name: &str) -> RunResults {
    RunResults::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// What one plot breaks of the chart rules, one line each.
fn plot_problems(p: &Plot) -> Vec<String> {
    let mut out = Vec::new();
    let mut say = |what: &str| out.push(format!("{} ({}): {what}", p.kind, p.title));
    if !p.legend {
        say("a plot without a legend");
    }
    for t in &p.cut {
        say(&format!("text cut at the plot's edge: {t}"));
    }
    if p.empty_texts > 0 {
        say(&format!(
            "{} empty text(s), an unlabelled row",
            p.empty_texts
        ));
    }
    let (lo, hi) = p
        .ticks
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
            (a.min(t), b.max(t))
        });
    match p.kind.as_str() {
        "bars" | "ratio" => {
            if p.labels.len() != p.bar_widths.len() || p.rows_without_bar > 0 {
                say(&format!(
                    "{} row label(s), {} bar(s), {} row(s) without a bar",
                    p.labels.len(),
                    p.bar_widths.len(),
                    p.rows_without_bar
                ));
            }
            if p.legend_over_bars {
                say("the legend covers a bar");
            }
        }
        "timeline" => {}
        _ => say("a plot of no known kind (bars, ratio, timeline)"),
    }
    if p.kind == "bars" && lo <= 0.0 && !p.bar_widths.iter().any(|&w| w < 1.0) {
        say("the axis starts at 0 though no bar reaches 0");
    }
    if p.kind == "ratio" && !(lo <= 1.0 && 1.0 <= hi) {
        say(&format!("a ratio axis from {lo} to {hi} leaves out 1"));
    }
    if p.kind == "ratio" && !p.band {
        say("a ratio chart without its band");
    }
    out
}

/// Problems found on a page, one line each.
fn problems(f: &Findings, console: &[String]) -> Vec<String> {
    let mut p: Vec<String> = f.errors.iter().map(|e| format!("error: {e}")).collect();
    p.extend(console.iter().map(|c| format!("console: {c}")));
    if f.scroll_width > f.viewport {
        p.push(format!(
            "the page scrolls sideways: {} px in a {} px window",
            f.scroll_width, f.viewport
        ));
    }
    p.extend(f.wide.iter().map(|w| format!("wider than the window: {w}")));
    p.extend(f.small.iter().map(|s| format!("text below 12 px: {s}")));
    p.extend(f.plots.iter().flat_map(plot_problems));
    let at = |id: &str| f.headings.iter().position(|h| h == id);
    if let Some(clocks) = at("clocks")
        && at("summary").is_none_or(|s| s > clocks)
    {
        p.push("the clocks stand above the Summary".into());
    }
    if at("summary").is_some_and(|s| s > 0) {
        p.push(format!(
            "the Summary is not the first section: {:?}",
            f.headings
        ));
    }
    p
}

/// Judges `page` at both widths: no problem, and `plots` plots (which `more` may judge further).
fn judged(chromium: &Path, name: &str, page: &str, plots: usize, more: impl Fn(&Findings)) {
    let dir = target();
    std::fs::write(dir.join(format!("{name}.html")), page).unwrap();
    for width in WIDTHS {
        let file = dir.join(format!("{name}.{width}.check.html"));
        let (f, console) = check(chromium, page, &file, width);
        let found = problems(&f, &console);
        assert!(found.is_empty(), "{name} at {width} px: {found:#?}");
        assert_eq!(f.plots.len(), plots, "{name} at {width} px: {:?}", f.plots);
        more(&f);
    }
}

/// Screenshots of the page `name` (written by `judged`) at both widths.
fn screenshots(chromium: &Path, name: &str) {
    let dir = target();
    let url = format!("file://{}", dir.join(format!("{name}.html")).display());
    for width in WIDTHS {
        let shot = dir.join(format!("{name}-{width}.png"));
        let _ = std::fs::remove_file(&shot);
        browse(
            chromium,
            &url,
            &[
                &format!("--window-size={width},2400"),
                &format!("--screenshot={}", shot.display()),
            ],
        );
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{name}");
    }
}

#[test]
#[cfg_attr(
    not(chromium_found),
    ignore = "Chromium not found at build time (PATH, /usr/bin); .ci/run installs it"
)]
fn the_reports_of_recorded_h200_runs_keep_the_page_rules_at_1280_and_800_px() {
    let chromium = chromium();
    // the latest recorded run (no timeline), and one with three traced variants
    let latest = fixture("h200-run.json");
    let mut traced = fixture("results.json");
    assert!(latest.timelines.is_empty() && !traced.timelines.is_empty());
    // these runs predate the SASS excerpt in results.json: give one variant the excerpt of its
    // listing recorded in the same session, so that an opened excerpt is measured too
    let listing = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sass/tma-s3.bf16.sass"),
    )
    .unwrap();
    let tma = traced.variants.iter_mut().find(|v| v.name == "tma-s3");
    tma.unwrap().sass.as_mut().unwrap().excerpt = Some(bounded_excerpt(&listing, EXCERPT_LINES));
    // a run with torch peers beside the variants (one failed validation, with its long reason)
    let peers = fixture("h200-peers.json");
    assert!(!peers.peers.is_empty());
    for (name, r) in [("latest", &latest), ("traced", &traced), ("peers", &peers)] {
        let plots = if r.timelines.is_empty() { 1 } else { 2 };
        judged(&chromium, name, &html::render(r), plots, |f| {
            assert_eq!(f.plots[0].kind, "bars", "{name}: the bandwidth chart");
            assert_eq!(f.timeline, !r.timelines.is_empty(), "{name}");
        });
    }
    // GEMM runs' pages (Ampere mechanisms; with the Hopper ladder): the table, the chart over
    // cuBLAS, every variant's evidence
    for name in ["gemm-h200", "gemm-h200-hopper"] {
        judged(
            &chromium,
            name,
            &html::render(&fixture(&format!("{name}.json"))),
            1,
            |f| {
                assert_eq!(f.plots[0].kind, "ratio", "{name}: TFLOP/s over cuBLAS's");
            },
        );
    }
    for name in ["traced", "gemm-h200-hopper"] {
        screenshots(&chromium, name);
    }
}

#[test]
#[cfg_attr(
    not(chromium_found),
    ignore = "Chromium not found at build time (PATH, /usr/bin); .ci/run installs it"
)]
fn a_comparison_page_keeps_the_page_rules_at_1280_and_800_px() {
    let chromium = chromium();
    // the seam change's two binaries on one problem; the GEMM before and with its Hopper variants
    let pairs = [
        (
            "compare-rows",
            compare::compare(
                &fixture("seam-before.json"),
                &fixture("seam-after.json"),
                5.0,
            ),
        ),
        (
            "compare-gemm",
            compare::compare(
                &fixture("gemm-h200.json"),
                &fixture("gemm-h200-hopper.json"),
                5.0,
            ),
        ),
    ];
    for (name, c) in pairs {
        let page = html::compare::render(&c);
        assert!(page.contains(&c.new.describe()), "{name}");
        judged(&chromium, name, &page, 1, |f| {
            assert_eq!(f.plots[0].kind, "ratio", "{name}: NEW over BASE");
        });
    }
    screenshots(&chromium, "compare-rows");
}

/// One page that breaks every rule the checks judge, each once: each must be found.
#[test]
#[cfg_attr(
    not(chromium_found),
    ignore = "Chromium not found at build time (PATH, /usr/bin); .ci/run installs it"
)]
fn the_checks_catch_every_broken_rule() {
    let chromium = chromium();
    // a bar chart: ticks from 0 though its bars start at 100, a 9 px label, an empty row label,
    // a label without a bar, and its legend over a bar
    let bars = r#"<svg class="bars" width="400" height="200" viewBox="0 0 400 200">
        <text x="200" y="12" text-anchor="middle">values</text>
        <text x="60" y="40" text-anchor="end">one</text>
        <text x="60" y="70" text-anchor="end" font-size="9">nine pixels</text>
        <text x="60" y="100" text-anchor="end"></text>
        <text x="60" y="130" text-anchor="end">no bar</text>
        <g class="bars"><rect x="70" y="30" width="200" height="16"/><rect x="70" y="60" width="150" height="16"/></g>
        <text x="70" y="190" text-anchor="middle">0</text><text x="270" y="190" text-anchor="middle">2000</text>
        <g class="legend"><rect x="100" y="25" width="80" height="30" fill="white"/><text x="105" y="40">GB/s</text></g></svg>"#;
    // a ratio chart whose axis leaves out 1 and that has no band
    let ratio = r#"<svg class="ratio" width="400" height="120" viewBox="0 0 400 120">
        <text x="60" y="40" text-anchor="end">v</text>
        <g class="bars"><rect x="70" y="30" width="100" height="16"/></g>
        <text x="70" y="110" text-anchor="middle">0.50</text><text x="270" y="110" text-anchor="middle">0.90</text>
        <text x="390" y="70">past the edge</text>
        <g class="legend"><text x="300" y="100">ratio</text></g></svg>"#;
    // a plot of no known kind, without legend
    let unknown = r#"<svg width="100" height="50"><text x="5" y="20">no legend</text></svg>"#;
    let bad = format!(
        "<!DOCTYPE html><html><head></head><body>\
        <h2 id=\"clocks\">Clocks</h2><h2 id=\"summary\">Summary</h2>\
        <p style=\"font-size:10px\">small print</p>\
        <div style=\"width:1000px\">wide</div>\
        <div style=\"overflow-x:auto\"><div style=\"width:3000px\">wide but scrolls in its box</div></div>\
        {bars}{ratio}{unknown}\
        <script>console.error('logged'); throw new Error('thrown')</script></body></html>"
    );
    let file = target().join("bad.check.html");
    let (f, console) = check(&chromium, &bad, &file, 800);
    assert_eq!(f.errors.len(), 2, "{:?}", f.errors);
    assert!(f.errors[0].contains("logged") && f.errors[1].contains("thrown"));
    assert!(console.iter().any(|c| c.contains("Uncaught Error: thrown")));
    assert!(f.scroll_width > 800);
    let found = problems(&f, &console);
    for rule in [
        "the page scrolls sideways: ",
        "wider than the window: DIV. right 1",
        "text below 12 px: P. 10.0 px: small print",
        "text below 12 px: text. 9.0 px: nine pixels",
        "bars (values): the axis starts at 0 though no bar reaches 0",
        "bars (values): 1 empty text(s), an unlabelled row",
        "bars (values): 3 row label(s), 2 bar(s), 1 row(s) without a bar",
        "bars (values): the legend covers a bar",
        "ratio (v): a ratio axis from 0.5 to 0.9 leaves out 1",
        "ratio (v): a ratio chart without its band",
        "ratio (v): text cut at the plot's edge: past the edge",
        " (no legend): a plot without a legend",
        " (no legend): a plot of no known kind (bars, ratio, timeline)",
        "the clocks stand above the Summary",
        "the Summary is not the first section",
    ] {
        assert!(
            found
                .iter()
                .any(|p| p.starts_with(rule) || p.contains(rule)),
            "{rule} not found in {found:#?}"
        );
    }
    // the box that scrolls is allowed: one wide element only
    assert_eq!(f.wide.len(), 1, "{:?}", f.wide);
    assert!(!f.timeline);
    // and the mended page is clean: the same checks pass a chart that keeps the rules
    let good = r#"<!DOCTYPE html><html><head></head><body><h2 id="summary">Summary</h2><h2 id="clocks">Clocks</h2>
        <svg class="ratio" width="400" height="160" viewBox="0 0 400 160">
        <text x="200" y="20" text-anchor="middle">ratios</text>
        <g class="band"><rect x="150" y="60" width="40" height="60"/></g>
        <text x="60" y="80" text-anchor="end">v</text>
        <g class="bars"><rect x="170" y="72" width="60" height="16"/></g>
        <text x="70" y="150" text-anchor="middle">0.50</text><text x="170" y="150" text-anchor="middle">1.00</text>
        <g class="legend"><text x="100" y="30">ratio</text></g></svg></body></html>"#;
    let (f, console) = check(&chromium, good, &target().join("good.check.html"), 800);
    assert_eq!(problems(&f, &console), Vec::<String>::new());
}
