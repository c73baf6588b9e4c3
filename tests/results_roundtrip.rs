//! results.json written by the H200 run reads back, as any workload's (its problem as JSON) and as
//! its own workload's (its problem typed), writes, and reads again unchanged.

use tilepipe::clocks::assess;
use tilepipe::render::table;
use tilepipe::results::{SCHEMA_VERSION, Status};
use tilepipe::workload::rows::RowProblem;

type RunResults = tilepipe::results::RunResults<serde_json::Value>;

#[test]
fn results_json_round_trips() {
    let path = format!("{}/tests/fixtures/results.json", env!("CARGO_MANIFEST_DIR"));
    let r = RunResults::read(std::path::Path::new(&path)).unwrap();
    assert_eq!(r.schema_version, SCHEMA_VERSION);
    assert!(r.device.name.contains("H200"));
    assert!(r.baseline().is_some_and(|b| b.status == Status::Passed));
    // every timed variant kept every sample, and validation came first
    for v in r.variants.iter().filter(|v| v.timing.is_some()) {
        let t = v.timing.as_ref().unwrap();
        assert_eq!(t.device_ms.len(), t.device.n);
        assert!(t.device.n >= 20);
        assert!(
            !v.validation.is_empty()
                && v.validation
                    .iter()
                    .all(|c| c.verdicts.iter().all(|v| v.passed)),
            "{}",
            v.name
        );
    }
    // NVML readings travel with every timing; the recorded run was power-capped, and each
    // measurement whose SM clock moved is named among the problems with its range
    let flagged: Vec<&str> = r
        .variants
        .iter()
        .filter(|v| v.timing.is_some())
        .filter(|v| {
            let c = v.timing.as_ref().and_then(|t| t.clocks.as_ref());
            let c = c.expect("clocks recorded with every timing");
            assert!(!c.samples.is_empty());
            assert_eq!(c.warning, assess(&c.samples), "{}", v.name);
            c.warning.is_some()
        })
        .map(|v| v.name.as_str())
        .collect();
    assert!(!flagged.is_empty());
    let problems = table::problems(&r);
    for name in &flagged {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(&format!("CLOCKS {name}:"))),
            "{name}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let again = dir.path().join("results.json");
    r.write(&again).unwrap();
    let back = RunResults::read(&again).unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::to_value(&back).unwrap()
    );
    // read as the row workload's, its problem is the view it ran on
    let typed = tilepipe::results::RunResults::<RowProblem>::read(&again).unwrap();
    assert_eq!(typed.problem.view.hidden, 4096);
    // another schema version is refused with the reason
    let mut v = serde_json::to_value(&r).unwrap();
    v["schema_version"] = 99.into();
    std::fs::write(&again, v.to_string()).unwrap();
    let e = RunResults::read(&again).unwrap_err().to_string();
    assert!(e.contains("schema_version 99"), "{e}");
}

#[test]
fn a_gzipped_run_reads_and_another_kind_of_file_is_named_with_its_command() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let plain = std::fs::read(fixtures.join("h200-run.json")).unwrap();
    let gz = dir.path().join("results.json.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&plain).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let a = RunResults::read(&fixtures.join("h200-run.json")).unwrap();
    let b = RunResults::read(&gz).unwrap();
    assert_eq!(a.variants.len(), b.variants.len());
    // the same bytes under a .gz name that are not gzip: said so
    let fake = dir.path().join("fake.json.gz");
    std::fs::write(&fake, &plain).unwrap();
    let e = RunResults::read(&fake).unwrap_err().to_string();
    assert!(e.contains("not a gzipped results.json"), "{e}");
    let check = dir.path().join("check.json");
    std::fs::write(&check, r#"{"tests": [], "skipped": []}"#).unwrap();
    // as `check --out` writes it: pretty-printed, so that no line alone is a document
    let pretty = dir.path().join("pretty-check.json");
    std::fs::write(&pretty, "{\n  \"tests\": [],\n  \"skipped\": []\n}\n").unwrap();
    let toml = fixtures.join("../../Cargo.toml");
    for (file, says) in [
        (
            fixtures.join("sweep.jsonl"),
            "a sweep's sweep.jsonl (`tilepipe model --from`",
        ),
        (check, "a suite's check.json"),
        (pretty, "a suite's check.json"),
        (toml, "not JSON (expected value at line 1"),
    ] {
        let e = RunResults::read(&file).unwrap_err().to_string();
        assert!(e.contains(says) && e.contains("run's results.json"), "{e}");
        assert!(!e.contains("missing field"), "{e}");
    }
}
