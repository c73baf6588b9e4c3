//! report.html in a real browser. Headless Chromium loads the report of recorded H200 runs at a
//! 1280 px wide window, every `<details>` opened, and the page checks itself (a script this test
//! adds to a copy; report.html has none): no console errors, nothing wider than the window outside
//! a box that scrolls, a legend in every plot, the timeline present exactly when the run traced
//! variants. A screenshot of the report is kept in target/report-screenshot.png.
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

/// Collects errors from the first moment: uncaught ones and console.error.
const CAPTURE: &str = "<script>window.__errors=[];\
addEventListener('error',function(e){__errors.push(String(e.message))});\
(function(f){console.error=function(){__errors.push(Array.from(arguments).join(' '));f.apply(console,arguments)}})(console.error);\
</script>";

/// Opens every `<details>`, then measures and writes the findings as JSON into `<pre id=selftest>`.
const CHECK: &str = "<script>(function(){\
document.querySelectorAll('details').forEach(function(d){d.open=true});\
var W=innerWidth,out={errors:__errors,viewport:W,scroll_width:document.documentElement.scrollWidth,wide:[]};\
function scrolls(e){for(var p=e.parentElement;p;p=p.parentElement){var o=getComputedStyle(p).overflowX;if(o=='auto'||o=='scroll')return true}return false}\
document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();\
if(r.right>W+1&&!scrolls(e))out.wide.push(e.tagName+'.'+(e.getAttribute('class')||'')+' right '+Math.round(r.right))});\
var plots=Array.from(document.querySelectorAll('svg')).filter(function(s){return !s.parentElement.closest('svg')});\
out.plots=plots.length;\
out.without_legend=plots.filter(function(s){return !s.querySelector('g.legend text')}).map(function(s){return (s.textContent||'').trim().slice(0,60)});\
out.timeline=!!document.querySelector('#timeline ~ figure.plot svg g.legend');\
var p=document.createElement('pre');p.id='selftest';p.textContent=JSON.stringify(out);document.body.appendChild(p)})()</script>";

#[derive(Debug, Deserialize)]
struct Findings {
    errors: Vec<String>,
    viewport: u32,
    scroll_width: u32,
    wide: Vec<String>,
    plots: usize,
    without_legend: Vec<String>,
    timeline: bool,
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Runs Chromium headless on `url` with `args` at 1280 px wide, in a fresh profile, closed off
/// from the network; returns stdout and stderr.
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

/// Loads a copy of `page` with the checking scripts and returns what the page found, plus the
/// console messages Chromium logged.
fn check(chromium: &Path, page: &str, file: &Path) -> (Findings, Vec<String>) {
    let with_checks = page
        .replacen("<head>", &format!("<head>{CAPTURE}"), 1)
        .replacen("</body>", &format!("{CHECK}</body>"), 1);
    assert_ne!(with_checks, page, "the page has a head and a body");
    std::fs::write(file, with_checks).unwrap();
    let url = format!("file://{}", file.display());
    let (dom, log) = browse(chromium, &url, &["--window-size=1280,1000", "--dump-dom"]);
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
    (serde_json::from_str(&json).unwrap(), console)
}

fn target() -> PathBuf {
    // CARGO_TARGET_TMPDIR is target/tmp
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    std::fs::create_dir_all(dir.join("report-browser")).unwrap();
    dir.to_path_buf()
}

fn fixture(name: &str) -> RunResults {
    RunResults::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
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
    p.extend(
        f.without_legend
            .iter()
            .map(|s| format!("a plot without a legend: {s}")),
    );
    p
}

#[test]
#[cfg_attr(
    not(chromium_found),
    ignore = "Chromium not found at build time (PATH, /usr/bin); .ci/run installs it"
)]
fn the_report_of_recorded_h200_runs_fits_a_1280_px_window_in_chromium() {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("TILEPIPE_REQUIRE_BROWSER").is_none(),
            "TILEPIPE_REQUIRE_BROWSER is set and chromium was not found"
        );
        eprintln!("skipped: chromium not found");
        return;
    };
    let target = target();
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
        let page = html::render(r);
        let file = target.join(format!("report-browser/{name}.html"));
        std::fs::write(&file, &page).unwrap();
        let (f, console) = check(&chromium, &page, &file.with_extension("check.html"));
        let found = problems(&f, &console);
        assert!(found.is_empty(), "{name}: {found:#?}");
        assert_eq!(f.viewport, 1280);
        let plots = if r.timelines.is_empty() { 1 } else { 2 };
        assert_eq!(
            f.plots, plots,
            "{name}: the bandwidth chart (and the timeline)"
        );
        assert_eq!(f.timeline, !r.timelines.is_empty(), "{name}");
    }
    // GEMM runs' pages (Ampere mechanisms; with the Hopper ladder): the table, the TFLOP/s chart
    // against cuBLAS, every variant's evidence
    for name in ["gemm-h200", "gemm-h200-hopper"] {
        let gemm = fixture(&format!("{name}.json"));
        let page = html::render(&gemm);
        let file = target.join(format!("report-browser/{name}.html"));
        std::fs::write(&file, &page).unwrap();
        let (f, console) = check(&chromium, &page, &file.with_extension("check.html"));
        let found = problems(&f, &console);
        assert!(found.is_empty(), "{name}: {found:#?}");
        assert_eq!(f.plots, 1, "{name}: the TFLOP/s chart");
    }
    let shot = target.join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let url = format!(
        "file://{}",
        target.join("report-browser/traced.html").display()
    );
    browse(
        &chromium,
        &url,
        &[
            "--window-size=1280,2000",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
}

#[test]
#[cfg_attr(
    not(chromium_found),
    ignore = "Chromium not found at build time (PATH, /usr/bin); .ci/run installs it"
)]
fn a_comparison_page_fits_a_1280_px_window_in_chromium() {
    let Some(chromium) = chromium() else {
        assert!(std::env::var_os("TILEPIPE_REQUIRE_BROWSER").is_none());
        eprintln!("skipped: chromium not found");
        return;
    };
    let target = target();
    let gemm = fixture;
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
            compare::compare(&gemm("gemm-h200.json"), &gemm("gemm-h200-hopper.json"), 5.0),
        ),
    ];
    for (name, c) in pairs {
        let page = html::compare::render(&c);
        assert!(page.contains(html::compare::CHART_TITLE), "{name}");
        assert!(page.contains(&c.new.reference_label()), "{name}");
        let file = target.join(format!("report-browser/{name}.html"));
        std::fs::write(&file, &page).unwrap();
        let (f, console) = check(&chromium, &page, &file.with_extension("check.html"));
        let found = problems(&f, &console);
        assert!(found.is_empty(), "{name}: {found:#?}");
        assert_eq!(f.plots, 1, "{name}: the ratio chart");
    }
}

#[test]
#[cfg_attr(
    not(chromium_found),
    ignore = "Chromium not found at build time (PATH, /usr/bin); .ci/run installs it"
)]
fn the_checks_catch_a_wide_element_a_plot_without_legend_and_an_error() {
    let Some(chromium) = chromium() else {
        assert!(std::env::var_os("TILEPIPE_REQUIRE_BROWSER").is_none());
        eprintln!("skipped: chromium not found");
        return;
    };
    let bad = "<!DOCTYPE html><html><head></head><body>\
        <div style=\"width:2000px\">wide</div>\
        <div style=\"overflow-x:auto\"><div style=\"width:3000px\">wide but scrolls in its box</div></div>\
        <svg width=\"100\" height=\"50\"><text x=\"5\" y=\"20\">no legend</text></svg>\
        <script>console.error('logged'); throw new Error('thrown')</script></body></html>";
    let file = target().join("report-browser/bad.check.html");
    let (f, console) = check(&chromium, bad, &file);
    assert_eq!(f.errors.len(), 2, "{:?}", f.errors);
    assert!(f.errors[0].contains("logged") && f.errors[1].contains("thrown"));
    assert!(console.iter().any(|c| c.contains("Uncaught Error: thrown")));
    assert!(f.scroll_width > 2000);
    assert_eq!(
        f.wide.len(),
        1,
        "the box that scrolls is allowed: {:?}",
        f.wide
    );
    assert_eq!(f.without_legend, vec!["no legend"]);
    assert!(!f.timeline);
    assert_eq!(problems(&f, &console).len(), 2 + console.len() + 3);
}
