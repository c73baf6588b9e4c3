//! `compare` on two recorded H200 runs of the same problem by two binaries (the seam change:
//! tests/fixtures/seam-{before,after}.json), and on copies of them edited to show each rule firing.

use tilepipe::evidence::sass::Attestation;
use tilepipe::render::compare::{Change, Comparison, Verdict, compare, render};
use tilepipe::results::Status;
use tilepipe::verdict::statistics::Summary;

type RunResults = tilepipe::results::RunResults<serde_json::Value>;

fn fixture(name: &str) -> RunResults {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    RunResults::read(std::path::Path::new(&path)).unwrap()
}

fn before() -> RunResults {
    fixture("seam-before.json")
}

fn after() -> RunResults {
    fixture("seam-after.json")
}

/// BASE against a copy of itself with one variant's samples replaced.
fn with_samples(name: &str, samples: &[f64]) -> (RunResults, RunResults) {
    let base = before();
    let mut new = base.clone();
    let t = variant(&mut new, name).timing.as_mut().unwrap();
    t.device_ms = samples.to_vec();
    t.device = Summary::of(samples).unwrap();
    (base, new)
}

fn variant<'a>(r: &'a mut RunResults, name: &str) -> &'a mut tilepipe::results::VariantResult {
    r.variants.iter_mut().find(|v| v.name == name).unwrap()
}

fn row<'a>(c: &'a Comparison, name: &str) -> &'a tilepipe::render::compare::VariantChange {
    c.variants.iter().find(|v| v.name == name).unwrap()
}

/// Samples around `median` ms spread over +-`half` ms.
fn around(median: f64, half: f64) -> Vec<f64> {
    vec![median - half, median, median + half]
}

#[test]
fn the_recorded_runs_compare_as_measured() {
    let c = compare(&before(), &after(), 5.0);
    assert_eq!(c.variants.len(), 22);
    assert_eq!(
        (
            c.count(Verdict::Same),
            c.count(Verdict::Faster),
            c.count(Verdict::Slower)
        ),
        (14, 2, 6)
    );
    let regressed: Vec<&str> = c.regressions().map(|v| v.name.as_str()).collect();
    assert_eq!(
        regressed,
        [
            "cpasync-ca4-s2",
            "mca-pipeline-elem-s2",
            "mca-barrier-elem-s2",
            "tma-ws-s3-64k"
        ]
    );
    // slower beyond the noise but within 5%
    let v = row(&c, "cpasync-cg16-s2");
    assert_eq!(v.verdict, Verdict::Slower);
    assert!(!v.regression && v.ratio.unwrap() < 1.05);
    // 4% apart in the medians, yet inside BASE's wide spread (1146..1248 us): noise
    let v = row(&c, "tma-ws-s3");
    assert_eq!(v.verdict, Verdict::Same);
    assert!(v.ratio.unwrap() < 0.97);
    assert_eq!(
        row(&c, "mca-pipeline-elem-s2").changes,
        [
            Change::Resource {
                what: "registers".into(),
                base: 40,
                new: 48
            },
            Change::Resource {
                what: "local B".into(),
                base: 24,
                new: 0
            },
            Change::Resource {
                what: "blocks/SM".into(),
                base: 6,
                new: 5
            },
        ]
    );
    // same GPU, same problem, a copy ceiling within its spread
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!((c.base.ceiling_gbps.unwrap().round()), 4262.0);
}

#[test]
fn clearly_faster_clearly_slower_and_overlapping() {
    let base_median = before().variants[0].timing.as_ref().unwrap().device.median;
    for (samples, verdict) in [
        (around(0.8 * base_median, 0.001), Verdict::Faster),
        (around(1.2 * base_median, 0.001), Verdict::Slower),
        // 20% slower in the median, but its own spread reaches across: noise, at any threshold
        (around(1.2 * base_median, 0.3 * base_median), Verdict::Same),
    ] {
        let (base, new) = with_samples("sync", &samples);
        let v = row(&compare(&base, &new, 5.0), "sync").clone();
        assert_eq!(v.verdict, verdict, "{samples:?}");
        assert_eq!(v.regression, verdict == Verdict::Slower, "{samples:?}");
        assert!((v.ratio.unwrap() - samples[1] / base_median).abs() < 1e-12);
    }
}

#[test]
fn only_slower_beyond_the_threshold_regresses() {
    let base_median = before().variants[0].timing.as_ref().unwrap().device.median;
    let (base, new) = with_samples("sync", &around(1.2 * base_median, 0.001));
    for (threshold, regressed) in [(5.0, true), (19.0, true), (21.0, false), (50.0, false)] {
        let c = compare(&base, &new, threshold);
        assert_eq!(c.regressed(), regressed, "threshold {threshold}");
        assert_eq!(row(&c, "sync").verdict, Verdict::Slower);
    }
    // faster by any amount is never a regression
    let (base, new) = with_samples("sync", &around(0.5 * base_median, 0.001));
    assert!(!compare(&base, &new, 0.0).regressed());
    // nothing changed: nothing regressed, even with no tolerance at all
    assert!(!compare(&base, &base, 0.0).regressed());
}

#[test]
fn variants_new_in_new_and_missing_from_new_are_listed_last_and_unranked() {
    let base = before();
    let mut new = base.clone();
    new.variants.retain(|v| v.name != "tma-s4");
    variant(&mut new, "bulk-s3").name = "bulk-s5".into();
    let c = compare(&base, &new, 5.0);
    assert_eq!(c.variants.len(), 23);
    let v = row(&c, "tma-s4");
    assert_eq!(
        (v.verdict, v.new.is_none(), v.ratio),
        (Verdict::Missing, true, None)
    );
    assert_eq!(row(&c, "bulk-s3").verdict, Verdict::Missing);
    let v = c.variants.last().unwrap();
    assert_eq!((v.name.as_str(), v.verdict), ("bulk-s5", Verdict::New));
    assert!(v.base.is_none() && !c.regressed());
    assert!(
        c.summary()
            .starts_with("20 same, 0 faster, 0 slower, 1 new, 2 missing (threshold 5%)"),
        "{}",
        c.summary()
    );
}

#[test]
fn a_variant_that_stops_passing_regresses_whatever_its_time() {
    let base = before();
    for (status, regressed) in [
        (Status::Failed, true),
        (Status::Error, true),
        (Status::Unfinished, true),
        // a skip carries its reason (an older GPU, a view the mechanism cannot take)
        (Status::Skipped, false),
    ] {
        let mut new = base.clone();
        let v = variant(&mut new, "tma-s2");
        v.status = status;
        v.timing = None;
        let c = compare(&base, &new, 50.0);
        let v = row(&c, "tma-s2");
        assert_eq!(v.verdict, Verdict::NotTimed);
        assert_eq!(v.regression, regressed, "{status:?}");
        assert_eq!(
            v.changes,
            [Change::Status {
                base: Status::Passed,
                new: status
            }]
        );
    }
    // failed before, passes now: an improvement, not a regression
    let mut failed = base.clone();
    variant(&mut failed, "tma-s2").status = Status::Failed;
    variant(&mut failed, "tma-s2").timing = None;
    let c = compare(&failed, &base, 5.0);
    assert!(!c.regressed());
    assert_eq!(row(&c, "tma-s2").verdict, Verdict::NotTimed);
}

#[test]
fn a_changed_attestation_is_named() {
    let base = before();
    let mut new = base.clone();
    variant(&mut new, "tma-s3")
        .sass
        .as_mut()
        .unwrap()
        .attestation = Attestation::Mismatch {
        claimed: "UTMALDG".into(),
        emitted: "LDG, STS".into(),
    };
    variant(&mut new, "bulk-s2").sass = None;
    let c = compare(&base, &new, 5.0);
    assert_eq!(
        row(&c, "tma-s3").changes,
        [Change::Attestation {
            base: "attested".into(),
            new: "claimed UTMALDG, emitted LDG, STS".into()
        }]
    );
    assert_eq!(
        row(&c, "bulk-s2").changes[0].describe(),
        "attestation attested -> -"
    );
    // a different evidence count under the same label is no change
    assert!(
        row(&compare(&before(), &after(), 5.0), "tma-s3")
            .changes
            .is_empty()
    );
}

#[test]
fn another_gpu_another_problem_or_a_moved_ceiling_is_a_warning() {
    let base = before();
    let mut new = base.clone();
    new.device.name = "NVIDIA H100 80GB HBM3".into();
    let c = compare(&base, &new, 5.0);
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].contains("different GPUs") && c.warnings[0].contains("H100"));
    assert!(!c.regressed());

    let mut new = base.clone();
    new.workload.problem = new.workload.problem.replace("x 4096", "x 1544");
    let w = compare(&base, &new, 5.0).warnings;
    assert!(w.len() == 1 && w[0].contains("different problems"), "{w:?}");

    let mut new = base.clone();
    let ceiling = new.ceiling.as_mut().unwrap();
    let median = ceiling.time.median;
    ceiling.time = Summary::of(&around(1.3 * median, 0.001)).unwrap();
    ceiling.gbps /= 1.3;
    let w = compare(&base, &new, 5.0).warnings;
    assert!(w.len() == 1 && w[0].contains("copy ceiling moved"), "{w:?}");
}

#[test]
fn markdown_is_one_github_table_under_a_summary() {
    let c = compare(&before(), &after(), 5.0);
    let md = render::markdown(&c);
    assert_eq!(
        md.lines().next().unwrap(),
        "**14 same, 2 faster, 6 slower (threshold 5%): 4 regressed: cpasync-ca4-s2, mca-pipeline-elem-s2, mca-barrier-elem-s2, tma-ws-s3-64k**"
    );
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 2 + c.variants.len());
    assert!(rows[0].starts_with("| variant |") && rows[1].starts_with("| --- |"));
    for (r, v) in rows[2..].iter().zip(&c.variants) {
        assert!(r.starts_with(&format!("| {} |", v.name)), "{r}");
    }
    let cells = |r: &str| r.replace("\\|", "").matches('|').count();
    assert!(rows.iter().all(|r| cells(r) == cells(rows[0])));
    assert!(md.contains("| 1.125 | slower (regression) | passed |"));
    let base = md.lines().find(|l| l.starts_with("- BASE: ")).unwrap();
    assert!(
        base.contains(" UTC on NVIDIA H200 at SM ") && base.contains("; copy ceiling 4262 GB/s; "),
        "{base}"
    );
}

#[test]
fn a_pipe_in_a_cell_does_not_split_the_markdown_row() {
    let base = before();
    let mut new = base.clone();
    variant(&mut new, "sync").sass.as_mut().unwrap().attestation = Attestation::Mismatch {
        claimed: "a|b".into(),
        emitted: "c".into(),
    };
    let md = render::markdown(&compare(&base, &new, 5.0));
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    let cells = |r: &str| r.replace("\\|", "").matches('|').count();
    assert!(rows.iter().all(|r| cells(r) == cells(rows[0])), "{md}");
}

/// Fields of one RFC 4180 line (no line breaks inside fields here).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    fields.push(cur);
    fields
}

#[test]
fn csv_parses_back_one_row_per_variant() {
    let base = before();
    let mut new = after();
    // a label with a comma and a quote must stay one field
    variant(&mut new, "tma-s3")
        .sass
        .as_mut()
        .unwrap()
        .attestation = Attestation::Mismatch {
        claimed: "UTMALDG \"3D\"".into(),
        emitted: "LDG, STS".into(),
    };
    let c = compare(&base, &new, 5.0);
    let text = render::csv(&c);
    let rows: Vec<Vec<String>> = text.lines().map(csv_fields).collect();
    assert_eq!(rows.len(), 1 + c.variants.len());
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
    assert_eq!(rows[0][0], "variant");
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let tma = rows.iter().find(|r| r[0] == "tma-s3").unwrap();
    assert_eq!(
        tma[col("changes")],
        "attestation attested -> claimed UTMALDG \"3D\", emitted LDG, STS"
    );
    let slow = rows.iter().find(|r| r[0] == "tma-ws-s3-64k").unwrap();
    assert_eq!(
        (
            slow[col("verdict")].as_str(),
            slow[col("regression")].as_str()
        ),
        ("slower", "true")
    );
    let v = row(&c, "tma-ws-s3-64k");
    // one unit everywhere: the CSV's and the JSON's times are the table's microseconds
    let median: f64 = slow[col("new_median_us")].parse().unwrap();
    assert_eq!(median, v.new.as_ref().unwrap().device_us.unwrap().median);
    let ms = after()
        .variants
        .iter()
        .find(|v| v.name == "tma-ws-s3-64k")
        .unwrap()
        .timing
        .as_ref()
        .unwrap()
        .device
        .median;
    assert!(
        (median - ms * 1e3).abs() < 1e-9,
        "{median} us against {ms} ms"
    );
    assert!(render::terminal(&c).contains(&format!("{median:.1}")));
}

#[test]
fn a_verdict_on_a_timing_whose_clocks_moved_is_marked_unreliable() {
    let (base, mut new) = (before(), after());
    let t = variant(&mut new, "sync").timing.as_mut().unwrap();
    let mut clocks = t.clocks.clone().expect("the recorded run read its clocks");
    clocks.warning = Some("SM clock moved 1455..1935 MHz".into());
    t.clocks = Some(clocks);
    let c = compare(&base, &new, 5.0);
    let sync = row(&c, "sync");
    let why = sync.unreliable.as_deref().unwrap();
    assert!(why.contains("NEW's clocks: SM clock moved"), "{why}");
    let cells = render::cells(sync);
    assert!(cells[4].ends_with("(clocks moved)"), "{cells:?}");
    // the others keep a plain verdict
    assert!(
        c.variants
            .iter()
            .filter(|v| v.name != "sync")
            .all(|v| v.unreliable.is_none()
                || v.base.as_ref().and_then(|s| s.clocks.as_ref()).is_some()
                || v.new.as_ref().and_then(|s| s.clocks.as_ref()).is_some())
    );
}

#[test]
fn each_side_is_named_by_its_file_commit_date_gpu_and_clocks() {
    let mut new = after();
    new.tilepipe_version = "0.1.0 (75a56d0)".into();
    let c =
        tilepipe::render::compare::compare_files((&before(), "base.json"), (&new, "new.json"), 5.0);
    let text = render::terminal(&c);
    let line = |role: &str| {
        text.lines()
            .find(|l| l.starts_with(role))
            .unwrap()
            .to_string()
    };
    let (base, new) = (line("BASE: "), line("NEW: "));
    for (line, says) in [
        (
            &base,
            "BASE: base.json: tilepipe 0.1.0 (commit not recorded), made 2026-12-01 00:14 UTC on NVIDIA H200 at SM 1455..1980 MHz, memory 3201 MHz (throttled: sw_power_cap); copy ceiling 4262 GB/s; rmsnorm bf16 262144 x 4096",
        ),
        (
            &new,
            "NEW: new.json: tilepipe 0.1.0 (75a56d0), made 2026-12-01 00:15 UTC on NVIDIA H200 at SM 1920..1980 MHz",
        ),
    ] {
        assert!(line.starts_with(says), "{line}");
    }
    // the same in every format that names the runs
    let md = render::markdown(&c);
    assert!(
        md.contains(&format!("- {base}")) && md.contains(&format!("- {new}")),
        "{md}"
    );
    // a run without clock readings says so
    let mut unread = after();
    for t in unread.variants.iter_mut().filter_map(|v| v.timing.as_mut()) {
        t.clocks = None;
    }
    let c = compare(&before(), &unread, 5.0);
    assert!(render::terminal(&c).contains("on NVIDIA H200 at clocks not read;"));
}

#[test]
fn json_reads_back_as_the_same_comparison() {
    let c = compare(&before(), &after(), 5.0);
    let back: Comparison = serde_json::from_str(&render::json(&c)).unwrap();
    assert_eq!(back.summary(), c.summary());
    assert_eq!(back.warnings, c.warnings);
    for (b, v) in back.variants.iter().zip(&c.variants) {
        assert_eq!(
            (&b.name, b.verdict, b.regression, &b.changes),
            (&v.name, v.verdict, v.regression, &v.changes)
        );
        // serde_json parses floats to within an ulp or so, not always to the same bits
        assert!(
            (b.ratio.unwrap() - v.ratio.unwrap()).abs() < 1e-12,
            "{}",
            v.name
        );
    }
}

#[test]
fn the_terminal_table_ends_in_the_summary() {
    let c = compare(&before(), &after(), 5.0);
    let text = render::terminal(&c);
    assert_eq!(text.lines().last().unwrap(), c.summary());
    assert!(c.variants.iter().all(|v| text.contains(&v.name)));
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("BASE: tilepipe 0.1.0") && first.contains(" UTC on NVIDIA H200 at SM "),
        "{first}"
    );
}

fn gemm_fixture(name: &str) -> RunResults {
    fixture(name)
}

#[test]
fn a_gemm_run_compares_against_itself_with_cublas_in_the_ceilings_place() {
    let base = gemm_fixture("gemm-h200-hopper.json");
    let same = compare(&base, &base.clone(), 5.0);
    assert!(same.warnings.is_empty(), "{:?}", same.warnings);
    assert_eq!(same.count(Verdict::Same), same.variants.len());
    assert!(
        same.base
            .reference_label()
            .starts_with("cuBLAS 13.1.0 687.5 TFLOP/s"),
        "{}",
        same.base.reference_label()
    );
    assert!(render::terminal(&same).contains("cuBLAS 13.1.0 687.5 TFLOP/s"));
    let mut new = base.clone();
    let v = new
        .variants
        .iter_mut()
        .find(|v| v.name == "tma-wgmma-ws-s4")
        .unwrap();
    let t = v.timing.as_mut().unwrap();
    t.device_ms = t.device_ms.iter().map(|ms| ms * 1.25).collect();
    t.device = Summary::of(&t.device_ms).unwrap();
    let c = compare(&base, &new, 5.0);
    let ws = row(&c, "tma-wgmma-ws-s4");
    assert_eq!(ws.verdict, Verdict::Slower);
    assert!(ws.regression && c.regressed());
    assert!((ws.ratio.unwrap() - 1.25).abs() < 1e-9);
    assert_eq!(row(&c, "tma-wgmma-s2").verdict, Verdict::Same);
}

#[test]
fn two_recorded_gemm_runs_of_one_problem_and_what_makes_a_warning() {
    // 8192^3 bf16 B [N x K] on the H200: before the Hopper variants existed, and with them
    let (ampere, hopper) = (
        gemm_fixture("gemm-h200.json"),
        gemm_fixture("gemm-h200-hopper.json"),
    );
    let c = compare(&ampere, &hopper, 5.0);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(row(&c, "tma-wgmma-ws-s4").verdict, Verdict::New);
    assert_eq!(row(&c, "cpasync-cg16-s3").verdict, Verdict::Missing);
    assert!(row(&c, "sync").ratio.is_some());
    let mut other = hopper.clone();
    other.workload.problem = "8192x8192x4096 bf16 B[NxK]".into();
    let cublas = other.vendor.as_mut().unwrap();
    let mut t = cublas.timing.clone().unwrap();
    t.device_ms = vec![0.70, 0.70, 0.71];
    t.device = Summary::of(&t.device_ms).unwrap();
    cublas.timing = Some(t);
    let c = compare(&hopper, &other, 5.0);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("different problems")),
        "{:?}",
        c.warnings
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("cuBLAS moved beyond its spread")),
        "{:?}",
        c.warnings
    );
}
