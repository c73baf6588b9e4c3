//! Everything the commands print on the terminal: results on stdout, notices on stderr.

use tilepipe::check::suite::SuiteReport;
use tilepipe::harness::CacheStats;
use tilepipe::model::Fit;
use tilepipe::report::{RunResults, table};
use tilepipe::sweep;
use tilepipe::timeline::TimelineResult;
use tilepipe::workload::View;

/// A line on stdout.
pub fn line(text: &str) {
    println!("{text}");
}

/// A notice on stderr (where progress goes), apart from the results.
pub fn notice(text: &str) {
    eprintln!("{text}");
}

/// The run's first lines: the problem, the cache, the copy ceiling.
pub fn run_header(r: &RunResults, view: &View, stats: CacheStats) {
    println!(
        "{} {} tokens {} hidden {} stride {} offset {} ({} MiB moved), tile {} rows; cubin cache: {} hits, {} compiled",
        r.workload.name,
        r.workload.dtype,
        view.tokens,
        view.hidden,
        view.row_stride,
        view.offset,
        r.workload.bytes_moved >> 20,
        r.workload.tile_rows,
        stats.hits,
        stats.compiled
    );
    if let Some(c) = &r.ceiling {
        println!(
            "copy ceiling (cuMemcpyDtoD, read + write): {:.0} GB/s, median of {}",
            c.gbps,
            c.samples_ms.len()
        );
    }
}

/// The performance and evidence tables.
pub fn tables(r: &RunResults) {
    println!("{}", table::performance(r));
    println!("{}", table::evidence(r));
}

/// What the device and host times mean.
pub fn timing_legend() {
    println!(
        "device times are CUDA-event medians per launch; host submit is the CPU time of the launch call, not device time"
    );
}

/// The problems the tables show, then the run's notes.
pub fn problems_and_notes(r: &RunResults) {
    for line in table::problems(r).iter().chain(&r.notes) {
        println!("{line}");
    }
}

pub fn timelines(tl: &[TimelineResult]) {
    for t in tl {
        println!(
            "timeline {}: {:.1}% of copy-in-flight time ran under compute ({} sampled blocks); instrumented {:.3} ms vs clean {:.3} ms ({:+.1}%); instrumented output {}",
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

/// The suite's last line.
pub fn suite_totals(report: &SuiteReport) {
    println!("{} passed, {} failed", report.passed(), report.failed());
}

/// One probe run.
pub fn probe_run(i: u64, variant: &str, passed: bool, detail: &str) {
    println!(
        "run {i} {variant}: {}: {detail}",
        if passed { "passed" } else { "FAILED" }
    );
}

/// Sweep points whose clocks moved, and where the points are.
pub fn sweep_tail(records: &[sweep::Record], jsonl: &std::path::Path) {
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
pub fn model(records: &[sweep::Record]) {
    let rows = sweep::plots::model_table(records);
    if rows.is_empty() {
        println!("model: no copy-only and compute-only probes in these records");
        return;
    }
    println!(
        "{:<22} {:>6} {:>10} {:>11} {:>11} {:>11} {:>10}  why",
        "variant", "stages", "tiles/blk", "predicted", "simulated", "measured", "departure"
    );
    for (c, _, why) in rows {
        let (departure, mark) = match c.fit {
            Fit::Within => (format!("{:+.1}%", 100.0 * c.departure), ""),
            Fit::Departs => (format!("{:+.1}%", 100.0 * c.departure), "FLAGGED: "),
            Fit::NotComparable => ("-".to_string(), ""),
        };
        println!(
            "{:<22} {:>6} {:>10} {:>9.4}ms {:>9.4}ms {:>9.4}ms {departure:>10}  {mark}{why}",
            c.variant, c.stages, c.tiles_per_block, c.predicted, c.simulated, c.measured,
        );
    }
}

/// Each line of a sweep file that holds no record, then how many there were.
pub fn skipped_lines(path: &std::path::Path, loaded: &sweep::Loaded) {
    if loaded.skipped.is_empty() {
        return;
    }
    for s in &loaded.skipped {
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
