//! Everything the commands print on the terminal: results on stdout, notices on stderr.

use super::args::Format;
use serde::Serialize;
use tilepipe::render::{formats, table};
use tilepipe::results::sweep::Record;
use tilepipe::results::sweep_store::Loaded;
use tilepipe::results::{RunResults, SuiteReport, TimelineResult};

/// A line on stdout.
pub fn line(text: &str) {
    println!("{text}");
}

/// A document (markdown, CSV, JSON) on stdout, ending in one line break.
pub fn document(text: &str) {
    println!("{}", text.trim_end_matches('\n'));
}

/// A notice on stderr (where progress goes), apart from the results.
pub fn notice(text: &str) {
    eprintln!("{text}");
}

/// The tables' width `--wide` asks for.
pub fn width(wide: bool) -> table::Width {
    match wide {
        true => table::Width::Wide,
        false => table::Width::Compact,
    }
}

/// The run's first lines: the GPU, the problem, the cache, the ceiling.
pub fn run_header<P>(r: &RunResults<P>) {
    println!("{}", r.device.summary());
    println!(
        "{}; cubin cache: {} hits, {} compiled",
        formats::run::subject(r),
        r.cache.hits,
        r.cache.compiled
    );
    if let Some(c) = &r.ceiling {
        println!("{}", c.describe());
    }
}

/// What a run shows at its end: the tables (with the header, the timing legend, the timelines,
/// problems and notes), or one document alone on stdout, with the problems and notes on stderr
/// where the format has no place for them.
pub fn run<P: Serialize>(r: &RunResults<P>, format: Format, width: table::Width) {
    match format {
        Format::Table => {
            run_header(r);
            tables(r, width);
            timing_legend();
            timelines(&r.timelines);
            problems_and_notes(r);
        }
        Format::Markdown => document(&formats::run::markdown(r)),
        Format::Json => document(&formats::run::json(r)),
        Format::Csv => {
            for l in table::problems(r).iter().chain(&r.notes) {
                notice(l);
            }
            document(&formats::run::csv(r));
        }
    }
}

/// The performance and evidence tables, and the workload's ladder where it has one.
pub fn tables<P>(r: &RunResults<P>, width: table::Width) {
    println!("{}", table::performance(r, width));
    println!("{}", table::evidence(r, width));
    let ladder = table::ladder_rows(r);
    if !ladder.is_empty() {
        println!(
            "the {} ladder, each step's fastest variant in this run:",
            r.workload.name
        );
        println!(
            "{}",
            table::render(&table::LADDER_HEADER, &table::LADDER_RIGHT, ladder)
        );
    }
}

/// What the device and host times mean.
pub fn timing_legend() {
    println!(
        "device times are CUDA-event medians per launch; host submit is the CPU time of the launch call, not device time"
    );
}

/// The problems the tables show, then the run's notes.
pub fn problems_and_notes<P>(r: &RunResults<P>) {
    for line in table::problems(r).iter().chain(&r.notes) {
        println!("{line}");
    }
}

pub fn timelines(tl: &[TimelineResult]) {
    for t in tl {
        let softmax = t.softmax.map_or(String::new(), |s| {
            format!(
                "; {:.1}% of softmax time under its own warpgroup's MMAs, {:.1}% under the other's",
                100.0 * s.own_share(),
                100.0 * s.other_share()
            )
        });
        println!(
            "timeline {}: {:.1}% of copy-in-flight time ran under compute ({} sampled blocks){softmax}; instrumented {:.3} ms vs clean {:.3} ms ({:+.1}%); instrumented output {}",
            t.variant,
            100.0 * t.overlap.share,
            t.blocks.len(),
            t.instrumented_ms,
            t.clean_ms,
            100.0 * t.overhead,
            if t.verdict.passed {
                "validated"
            } else {
                "FAILED validation"
            }
        );
    }
}

/// The suite's skips.
pub fn skipped(report: &SuiteReport) {
    for s in &report.skipped {
        println!("skip {s}");
    }
}

/// The suite's end: its last line, or the document in another format.
pub fn suite_end(report: &SuiteReport, format: Format) {
    match format {
        Format::Table => println!("{} passed, {} failed", report.passed(), report.failed()),
        Format::Markdown => document(&formats::check::markdown(report)),
        Format::Csv => document(&formats::check::csv(report)),
        Format::Json => document(&formats::check::json(report)),
    }
}

/// A probe's builds are ready: the process that watches it knows it is alive, and from here on
/// a run that prints nothing for long has hung. Where the variant has a twin, the twin launches
/// first in each run: a tool that observes the first launch of the kernel sees the twin.
pub fn probe_built(variant: &str, runs: usize, twin: Option<&str>) {
    println!("built {variant}: {runs} runs to go");
    if let Some(twin) = twin {
        println!("{}", probe_order(variant, twin));
    }
}

fn probe_order(variant: &str, twin: &str) -> String {
    format!(
        "each run launches {twin} first (its output is what {variant}'s must match bit for bit), then {variant}: to observe {variant} alone, skip the kernel's first launch of each run (Nsight Compute: --launch-skip 1 --launch-count 1)"
    )
}

/// One probe run.
pub fn probe_run(i: u64, variant: &str, passed: bool, detail: &str) {
    println!(
        "run {i} {variant}: {}: {detail}",
        if passed { "passed" } else { "FAILED" }
    );
}

/// A probe run whose launch left the context unusable (an illegal address, a trap).
pub fn probe_faulted(i: u64, variant: &str, detail: &str) {
    println!("run {i} {variant}: FAULTED: {detail}");
}

/// The sweep's end: the model and the tail, or the points as one document (and where they are
/// on stderr).
pub fn sweep_end(records: &[Record], jsonl: &std::path::Path, format: Format) {
    let doc = match format {
        Format::Table => {
            model(records);
            return sweep_tail(records, jsonl);
        }
        Format::Markdown => formats::sweep::markdown(records),
        Format::Csv => formats::sweep::csv(records),
        Format::Json => formats::sweep::json(records),
    };
    document(&doc);
    notice(&format!("{} points in {}", records.len(), jsonl.display()));
}

/// Sweep points whose clocks moved, and where the points are.
fn sweep_tail(records: &[Record], jsonl: &std::path::Path) {
    for r in records.iter().filter(|r| r.clock_warning.is_some()) {
        println!(
            "CLOCKS {}: {}",
            r.key,
            r.clock_warning.as_deref().unwrap_or_default()
        );
    }
    println!("{} points in {}", records.len(), jsonl.display());
}

/// Predicted against measured, per sweep point with probes.
pub fn model(records: &[Record]) {
    let rows = formats::sweep::model_rows(records);
    if rows.is_empty() {
        println!("model: no copy-only and compute-only probes in these records");
        return;
    }
    println!(
        "{:<22} {:>6} {:>10} {:>11} {:>11} {:>11} {:>10}  why",
        "variant", "stages", "steps/blk", "predicted", "simulated", "measured", "departure"
    );
    for r in rows {
        println!(
            "{:<22} {:>6} {:>10} {:>11} {:>11} {:>11} {:>10}  {}",
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
        );
    }
}

/// Each line of a sweep file that holds no record, then how many there were.
pub fn skipped_lines(path: &std::path::Path, loaded: &Loaded) {
    if loaded.skipped.is_empty() {
        return;
    }
    // the first few say what is wrong; a file of another kind would otherwise print each line
    const SHOWN: usize = 5;
    for s in loaded.skipped.iter().take(SHOWN) {
        notice(&format!("skipped {} {s}", path.display()));
    }
    notice(&format!(
        "{}: skipped {} of {} lines",
        path.display(),
        loaded.skipped.len(),
        loaded.lines
    ));
}

/// The SASS command's header and excerpt.
pub fn sass(header: &str, excerpt: &str) {
    println!("{header}");
    println!("{excerpt}");
}

/// An error that ends a command, in the form main gives its own.
pub fn error(text: &str) {
    eprintln!("tilepipe: error: {text}");
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_probe_names_its_twins_launch_and_how_to_skip_it() {
        let line = super::probe_order("tma-wgmma-ws-ov-persist-s3", "tma-wgmma-ws-s2");
        assert!(
            line.starts_with("each run launches tma-wgmma-ws-s2 first"),
            "{line}"
        );
        assert!(line.contains("then tma-wgmma-ws-ov-persist-s3"), "{line}");
        assert!(line.contains("--launch-skip 1 --launch-count 1"), "{line}");
    }
}
