use super::*;
use crate::clocks::{ClockSample, ClockTrace};
use crate::evidence::sass::{EXCERPT_LINES, bounded_excerpt};

type Run = RunResults<serde_json::Value>;

fn fixture(name: &str) -> Run {
    RunResults::read(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The recorded H200 run with three traced variants.
fn traced() -> Run {
    fixture("tests/fixtures/results.json")
}

#[test]
fn the_page_fetches_nothing_and_runs_nothing() {
    let page = render(&traced());
    for what in [
        "<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import",
    ] {
        assert!(!page.contains(what), "report.html holds {what}");
    }
    // the one URL in the page names the SVG namespace; it is never fetched
    let urls = page.matches("http").count();
    assert_eq!(
        urls,
        page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
}

#[test]
fn every_plot_has_a_legend_a_title_and_axis_units() {
    let page = render(&traced());
    let plots = page.matches("<svg").count();
    assert_eq!(plots, 2, "the bandwidth chart and the timeline");
    assert_eq!(page.matches("<g class=\"legend\">").count(), plots);
    for text in [
        chart::TITLE,
        "GB/s: bytes read + written",
        "copy ceiling: cuMemcpyDtoD in this run, 4262 GB/s",
        timeline::TITLE,
        "microseconds from",
        "copy in flight (issue to ready)",
    ] {
        assert!(page.contains(text), "{text}");
    }
}

#[test]
fn the_timeline_is_there_only_for_traced_runs() {
    let mut r = traced();
    assert!(render(&r).contains("id=\"timeline\""));
    assert!(render(&r).contains("<td>tma-s3</td><td class=\"num\">"));
    r.timelines.clear();
    let page = render(&r);
    assert!(!page.contains("id=\"timeline\""));
    assert_eq!(page.matches("<svg").count(), 1);
}

#[test]
fn tables_are_html_in_boxes_that_scroll() {
    let r = traced();
    let page = render(&r);
    assert!(!page.contains("<pre>┌"), "no terminal tables in the page");
    assert_eq!(
        page.matches("<div class=\"scroll\"><table>").count(),
        page.matches("<table>").count()
    );
    for v in &r.variants {
        assert!(page.contains(&format!("<td>{}</td>", v.name)), "{}", v.name);
        assert!(page.contains(&format!("<strong>{}</strong>", v.name)));
    }
}

#[test]
fn evidence_shows_the_limiter_attestation_completion_and_sass() {
    let mut r = traced();
    let listing = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sass/tma-s3.bf16.sass"),
    )
    .unwrap();
    let tma = r.variants.iter_mut().find(|v| v.name == "tma-s3").unwrap();
    tma.sass.as_mut().unwrap().excerpt = Some(bounded_excerpt(&listing, EXCERPT_LINES));
    let page = render(&r);
    assert!(page.contains("limited by <strong>shared memory</strong>"));
    assert!(page.contains("attested: UTMALDG.3D x2"));
    assert!(page.contains("mbarrier"), "tma's completion protocol");
    let sass = page.split("<details class=\"sass\">").count() - 1;
    assert_eq!(sass, r.variants.len());
    // the one variant with an excerpt shows it, movement lines marked; the others say why not
    assert!(page.contains("<span class=\"mv\">&gt;&gt; "));
    assert!(page.contains("UTMALDG.3D"));
    // line info names the source by its name, not by the folder the build ran in
    assert!(listing.contains("//## File \"/work/main/tilepipe_rmsnorm.cu\""));
    assert!(page.contains("//## File &quot;tilepipe_rmsnorm.cu&quot;, line "));
    assert!(!page.contains("/work/main"));
    assert_eq!(
        page.matches("These results keep no SASS excerpt").count(),
        r.variants.len() - 1
    );
}

#[test]
fn clocks_that_moved_are_warned_about_and_steady_ones_said_so() {
    let mut r = traced();
    let page = render(&r);
    assert!(page.contains("class=\"warn\""));
    assert!(page.contains("CLOCKS tma-s3: SM clock moved 1575..1980 MHz"));
    assert!(page.contains("throttle reasons seen: sw_power_cap"));
    let sample = |sm_mhz| ClockSample {
        sm_mhz,
        mem_mhz: 3201,
        temp_c: 40,
        power_w: 300.0,
        throttle: vec![],
    };
    for v in &mut r.variants {
        if let Some(t) = v.timing.as_mut() {
            t.clocks = Some(ClockTrace::new(vec![sample(1980), sample(1975)]));
        }
    }
    let page = render(&r);
    assert!(!page.contains("class=\"warn\""));
    assert!(page.contains("held within 2%"));
    // a peer's clocks are read as the variants' are, and warned about alike
    let mut peer = crate::results::Peer::new("torch.compile", None, "default mode");
    let mut t = r.variants[0].timing.clone().expect("timed");
    t.clocks = Some(ClockTrace::new(vec![sample(1980), sample(1740)]));
    peer.timing = Some(t);
    r.peers.push(peer);
    let page = render(&r);
    assert!(page.contains("CLOCKS torch.compile (peer): SM clock moved 1740..1980 MHz"));
}

/// A GEMM run recorded on the H200 (bf16, 8192^3, B [N x K]).
fn gemm_run() -> Run {
    fixture("tests/fixtures/gemm-h200.json")
}

#[test]
fn the_gemm_page_shows_cublas_every_variant_and_one_chart() {
    let r = gemm_run();
    let page = render(&r);
    assert!(!page.contains("<script") && !page.contains("<img"));
    assert_eq!(page.matches("<svg").count(), 1, "the TFLOP/s chart");
    assert_eq!(page.matches("<g class=\"legend\">").count(), 1);
    for text in [
        &chart::VENDOR_TITLE.replace('\'', "&apos;"),
        "speed over cuBLAS&apos;s in this run, at one SM clock",
        "cuBLAS in this run: 804.7 TFLOP/s",
        "13.1.0",
        "% of cuBLAS",
        "sync, bit for bit",
    ] {
        assert!(page.contains(text), "{text}");
    }
    assert_eq!(
        page.matches("<details class=\"variant\">").count(),
        r.variants.len()
    );
    let mut untimed = r.clone();
    untimed.variants.iter_mut().for_each(|v| v.perf = None);
    assert!(render(&untimed).contains("No plot: no timed variants"));
    // no peers asked for, no peers section; with them, each with how its C was checked
    assert!(!page.contains("id=\"peers\""));
    let mut with = r.clone();
    let mut mm = crate::results::Peer::new("torch.matmul", None, "a @ b in bf16");
    mm.checked = Some("f64 reference: 4096 elements within bounds".into());
    with.peers.push(mm);
    let page = render(&with);
    assert!(page.contains("id=\"peers\"") && page.contains("torch.matmul"));
    assert!(page.contains("f64 reference: 4096 elements within bounds"));
}

/// The GEMM run with the Hopper ladder, where cuBLAS itself was timed while its clock moved.
fn hopper_run() -> Run {
    fixture("tests/fixtures/gemm-h200-hopper.json")
}

#[test]
fn the_summary_comes_before_the_clocks() {
    for r in [traced(), gemm_run(), hopper_run()] {
        let page = render(&r);
        let at = |what: &str| page.find(what).unwrap_or_else(|| panic!("{what}"));
        assert!(at("<h2 id=\"summary\">") < at("<h2 id=\"clocks\">"));
        assert_eq!(page.find("<h2"), Some(at("<h2 id=\"summary\">")));
    }
}

#[test]
fn a_ratio_taken_at_unequal_clocks_says_so_beside_it() {
    let r = hopper_run();
    let page = render(&r);
    assert!(
        page.contains("<td class=\"num\">111.0*</td>"),
        "the headline share"
    );
    assert!(page.contains("% of cuBLAS*: cuBLAS's SM clock moved 1515..1980 MHz while it was timed, so every ratio to it mixes clocks"));
    assert!(page.contains("vs sync*: sync's SM clock moved 1515..1980 MHz"));
    assert!(page.contains("tma-wgmma-ws-s4 *"), "the chart's row");
    assert!(
        page.contains("cuBLAS in this run: 687.5 TFLOP/s (its clocks moved: SM 1515..1980 MHz)")
    );
    // the same run with every clock held: no mark, no note
    let steady = |t: &mut crate::results::Timing| {
        let s = ClockSample {
            sm_mhz: 1980,
            mem_mhz: 3201,
            temp_c: 40,
            power_w: 500.0,
            throttle: vec![],
        };
        t.clocks = Some(ClockTrace::new(vec![s.clone(), s]));
    };
    let mut held = r.clone();
    held.variants
        .iter_mut()
        .filter_map(|v| v.timing.as_mut())
        .for_each(steady);
    held.vendor
        .as_mut()
        .and_then(|v| v.timing.as_mut())
        .map(steady);
    let page = render(&held);
    assert!(page.contains("<td class=\"num\">111.0</td>"));
    assert!(!page.contains("Ratios taken at unequal clocks") && !page.contains("*</td>"));
    assert!(!page.contains("tma-wgmma-ws-s4 *") && !page.contains("its clocks moved"));
    // a row held at another clock than a steady cuBLAS is named alone
    let mut one = held.clone();
    let t = one.variants[3].timing.as_mut().unwrap();
    t.clocks
        .as_mut()
        .unwrap()
        .samples
        .iter_mut()
        .for_each(|s| s.sm_mhz = 1755);
    let page = render(&one);
    assert!(page.contains(
        "tma-wgmma-ws-s4 % of cuBLAS*: not at one clock: cuBLAS timed at 1980 MHz, this at 1755 MHz"
    ));
}

#[test]
fn a_tma_copy_of_unrecorded_size_is_a_box_with_its_legend() {
    let page = render(&hopper_run());
    assert!(
        page.contains("<td>tma</td><td>128x128x64-4w</td><td class=\"num\">2</td><td>box</td>")
    );
    assert!(page.contains("B/copy &quot;box&quot;: a TMA copy moves one tensor-map box"));
    // rows' TMA variants record their box's bytes
    let page = render(&traced());
    assert!(!page.contains("<td>box</td>") && !page.contains("B/copy &quot;box&quot;"));
    assert!(page.contains(
        "<td>tma-s3</td><td>tma</td><td>2 rows</td><td class=\"num\">3</td><td>16384</td>"
    ));
}
