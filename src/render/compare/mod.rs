//! Two runs side by side (`tilepipe compare BASE NEW`): per variant the ratio of device-time
//! medians and a verdict that knows the noise, status, attestation and resource changes, and the
//! runs' devices and ceilings (the copy, or the vendor library: if it moved beyond its spread,
//! the machine changed). Pure: two `RunResults` in, one plain `Comparison` out, which every output
//! format (render.rs) is drawn from, whichever workload.

pub mod render;

use crate::results::{RunResults, Status, VariantResult};
use crate::verdict::statistics::Summary;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    /// The medians differ by less than either run's min..max spread.
    Same,
    /// One run (or both) has no device timing for it: its status says why.
    NotTimed,
    /// Only in NEW.
    New,
    /// Only in BASE.
    Missing,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::NotTimed => "not timed",
            Verdict::New => "new",
            Verdict::Missing => "missing",
        }
    }
}

/// What one run says of one variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Side {
    pub status: Status,
    /// Device time per launch, us (the unit of every output of a comparison).
    pub device_us: Option<Summary>,
    /// Why its timing's clocks are in doubt (the run's CLOCKS flag), if they are.
    #[serde(default)]
    pub clocks: Option<String>,
    pub attestation: Option<String>,
    pub resources: Option<Figures>,
}

/// The resources a code change moves, as the evidence table shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figures {
    pub registers: u32,
    /// Static + dynamic, per block.
    pub smem_bytes: u32,
    pub local_bytes: u32,
    pub blocks_per_sm: u32,
}

/// A difference between the two runs' record of a variant, besides its time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    Status { base: Status, new: Status },
    Attestation { base: String, new: String },
    Resource { what: String, base: u32, new: u32 },
}

impl Change {
    pub fn describe(&self) -> String {
        match self {
            Change::Status { base, new } => format!("status {} -> {}", base.label(), new.label()),
            Change::Attestation { base, new } => format!("attestation {base} -> {new}"),
            Change::Resource { what, base, new } => format!("{what} {base} -> {new}"),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantChange {
    pub name: String,
    pub base: Option<Side>,
    pub new: Option<Side>,
    /// NEW median / BASE median, where both were timed.
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    /// Slower beyond the threshold, or passed in BASE and failed, errored or did not finish in
    /// NEW.
    pub regression: bool,
    /// Why the verdict is not to be trusted: a side's clocks moved while it was timed.
    #[serde(default)]
    pub unreliable: Option<String>,
    pub changes: Vec<Change>,
}

/// What a reader needs to know of each run to trust the ratios: same GPU, same ceiling.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    /// The results.json it was read from, as given.
    #[serde(default)]
    pub file: String,
    pub device: String,
    pub ceiling_gbps: Option<f64>,
    /// The measurement a GEMM run's variants are read against (cuBLAS, in TFLOP/s).
    #[serde(default)]
    pub reference: Option<String>,
    pub workload: String,
    pub tilepipe_version: String,
    pub created_unix_s: u64,
    /// The clocks read while its variants were timed ("SM 1575..1980 MHz, memory 3201 MHz").
    #[serde(default)]
    pub clocks: Option<String>,
}

impl RunInfo {
    /// When the run was made, as a UTC date and time ("2026-12-01 23:34 UTC").
    pub fn created(&self) -> String {
        match time::OffsetDateTime::from_unix_timestamp(self.created_unix_s as i64) {
            Ok(t) => format!("{} {:02}:{:02} UTC", t.date(), t.hour(), t.minute()),
            Err(_) => format!("{} s after 1970", self.created_unix_s),
        }
    }

    /// The run named so that BASE and NEW cannot be confused: the binary (its commit), when, the
    /// GPU and its clocks, the ceiling, the problem. The file is the caller's to show.
    pub fn describe(&self) -> String {
        let version = match self.tilepipe_version.contains('(') {
            true => self.tilepipe_version.clone(),
            // recorded before results named the commit
            false => format!("{} (commit not recorded)", self.tilepipe_version),
        };
        format!(
            "tilepipe {version}, made {} on {} at {}; {}; {}",
            self.created(),
            self.device,
            self.clocks.as_deref().unwrap_or("clocks not read"),
            self.reference_label(),
            self.workload
        )
    }

    /// What the run measured its variants against: the copy ceiling, or cuBLAS for a GEMM.
    pub fn reference_label(&self) -> String {
        match (&self.reference, self.ceiling_gbps) {
            (Some(r), _) => r.clone(),
            (None, Some(g)) => format!("copy ceiling {g:.0} GB/s"),
            (None, None) => "copy ceiling not measured".into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub threshold_pct: f64,
    pub base: RunInfo,
    pub new: RunInfo,
    /// Reasons the ratios may not measure the code alone (another GPU, another problem, a
    /// copy ceiling that moved).
    pub warnings: Vec<String>,
    /// BASE's variants in its order, then those only in NEW.
    pub variants: Vec<VariantChange>,
}

impl Comparison {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.variants
            .iter()
            .filter(|v| v.verdict == verdict)
            .count()
    }

    pub fn regressions(&self) -> impl Iterator<Item = &VariantChange> {
        self.variants.iter().filter(|v| v.regression)
    }

    pub fn regressed(&self) -> bool {
        self.regressions().next().is_some()
    }

    /// One line: "12 same, 5 faster, 5 slower (threshold 5%)", then any regressions by name.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} same, {} faster, {} slower",
            self.count(Verdict::Same),
            self.count(Verdict::Faster),
            self.count(Verdict::Slower)
        );
        for v in [Verdict::NotTimed, Verdict::New, Verdict::Missing] {
            let n = self.count(v);
            if n > 0 {
                s += &format!(", {n} {}", v.label());
            }
        }
        s += &format!(" (threshold {}%)", self.threshold_pct);
        let names: Vec<&str> = self.regressions().map(|v| v.name.as_str()).collect();
        if !names.is_empty() {
            s += &format!(": {} regressed: {}", names.len(), names.join(", "));
        }
        s
    }
}

/// What makes two runs no common ground for ratios: another workload, problem (shape and
/// precision) or GPU model, each said once. Empty where they match.
pub fn mismatches<P>(base: &RunResults<P>, new: &RunResults<P>) -> Vec<String> {
    let (bp, np) = (info(base).workload, info(new).workload);
    setting_warnings((&base.device.name, &new.device.name), (&bp, &np))
}

/// Compares NEW against BASE (read from the files named); `threshold_pct` is how much slower
/// than BASE a variant may get before it counts as a regression.
pub fn compare_files<P>(
    (base, base_file): (&RunResults<P>, &str),
    (new, new_file): (&RunResults<P>, &str),
    threshold_pct: f64,
) -> Comparison {
    let mut c = compare(base, new, threshold_pct);
    c.base.file = base_file.to_string();
    c.new.file = new_file.to_string();
    c
}

/// Compares NEW against BASE; `threshold_pct` is how much slower than BASE a variant may get
/// before it counts as a regression.
pub fn compare<P>(base: &RunResults<P>, new: &RunResults<P>, threshold_pct: f64) -> Comparison {
    let sides = |r: &RunResults<P>| -> Vec<(String, Side)> {
        r.variants
            .iter()
            .map(|v| (v.name.clone(), side(v)))
            .collect()
    };
    Comparison {
        threshold_pct,
        base: info(base),
        new: info(new),
        warnings: warnings(base, new),
        variants: changes_by_name(sides(base), sides(new), threshold_pct),
    }
}

/// Each of BASE's variants against NEW's of the same name, in BASE's order, then those only in NEW.
fn changes_by_name(
    base: Vec<(String, Side)>,
    mut new: Vec<(String, Side)>,
    threshold_pct: f64,
) -> Vec<VariantChange> {
    let mut out: Vec<VariantChange> = base
        .into_iter()
        .map(|(name, b)| {
            let n = new
                .iter()
                .position(|(m, _)| *m == name)
                .map(|i| new.remove(i).1);
            variant(name, b, n, threshold_pct)
        })
        .collect();
    out.extend(new.into_iter().map(|(name, n)| VariantChange {
        name,
        base: None,
        new: Some(n),
        ratio: None,
        verdict: Verdict::New,
        regression: false,
        unreliable: None,
        changes: Vec::new(),
    }));
    out
}

fn variant(name: String, base: Side, n: Option<Side>, threshold_pct: f64) -> VariantChange {
    let Some(new) = n else {
        return VariantChange {
            name,
            base: Some(base),
            new: None,
            ratio: None,
            verdict: Verdict::Missing,
            regression: false,
            unreliable: None,
            changes: Vec::new(),
        };
    };
    let (ratio, verdict) = match (&base.device_us, &new.device_us) {
        (Some(bt), Some(nt)) => (Some(nt.median / bt.median), speed(bt, nt)),
        _ => (None, Verdict::NotTimed),
    };
    let slower_than_allowed =
        verdict == Verdict::Slower && ratio.is_some_and(|r| r > 1.0 + threshold_pct / 100.0);
    // a skip carries its reason (another architecture, a view the mechanism cannot take);
    // anything else that stops passing is broken
    let broke = base.status == Status::Passed
        && matches!(
            new.status,
            Status::Failed | Status::Error | Status::Unfinished
        );
    let unreliable = [("BASE", &base), ("NEW", &new)]
        .iter()
        .filter_map(|(role, s)| Some(format!("{role}'s clocks: {}", s.clocks.as_ref()?)))
        .reduce(|a, b| format!("{a}; {b}"))
        .filter(|_| ratio.is_some());
    VariantChange {
        name,
        ratio,
        verdict,
        unreliable,
        regression: slower_than_allowed || broke,
        changes: changes(&base, &new),
        base: Some(base),
        new: Some(new),
    }
}

/// The rule `run` uses for its repeat and its "~" marks: a difference inside the spread is noise.
fn speed(base: &Summary, new: &Summary) -> Verdict {
    if base.indistinguishable(new) {
        Verdict::Same
    } else if new.median < base.median {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

fn side(v: &VariantResult) -> Side {
    Side {
        status: v.status,
        device_us: v.timing.as_ref().map(|t| t.device.scaled(1e3)),
        clocks: v
            .timing
            .as_ref()
            .and_then(|t| t.clocks.as_ref()?.warning.clone()),
        attestation: v.sass.as_ref().map(|s| s.attestation.label()),
        resources: v.resources.as_ref().map(figures),
    }
}

fn figures(r: &crate::evidence::resources::Resources) -> Figures {
    Figures {
        registers: r.function.registers,
        smem_bytes: r.function.static_smem + r.dynamic_smem,
        local_bytes: r.function.local_bytes,
        blocks_per_sm: r.occupancy.blocks_per_sm,
    }
}

fn changes(base: &Side, new: &Side) -> Vec<Change> {
    let mut out = Vec::new();
    if base.status != new.status {
        out.push(Change::Status {
            base: base.status,
            new: new.status,
        });
    }
    if base.attestation != new.attestation {
        let label = |a: &Option<String>| a.clone().unwrap_or_else(|| "-".into());
        out.push(Change::Attestation {
            base: label(&base.attestation),
            new: label(&new.attestation),
        });
    }
    // a variant without resources (skipped) has nothing to compare them with; its status says so
    if let (Some(b), Some(n)) = (base.resources, new.resources) {
        for (what, b, n) in [
            ("registers", b.registers, n.registers),
            ("smem B", b.smem_bytes, n.smem_bytes),
            ("local B", b.local_bytes, n.local_bytes),
            ("blocks/SM", b.blocks_per_sm, n.blocks_per_sm),
        ] {
            if b != n {
                out.push(Change::Resource {
                    what: what.into(),
                    base: b,
                    new: n,
                });
            }
        }
    }
    out
}

fn info<P>(r: &RunResults<P>) -> RunInfo {
    let reference = r
        .vendor
        .as_ref()
        .map(|c| match c.perf.as_ref().and_then(|p| p.tflops) {
            Some(t) => format!(
                "{} {} {t:.1} TFLOP/s",
                c.name,
                c.version.as_deref().unwrap_or("")
            ),
            None => format!("{} not timed ({})", c.name, c.status.label()),
        });
    RunInfo {
        file: String::new(),
        device: r.device.name.clone(),
        ceiling_gbps: r.ceiling.as_ref().map(|c| c.gbps),
        reference,
        workload: format!("{} {}", r.workload.name, r.workload.problem),
        tilepipe_version: r.tilepipe_version.clone(),
        created_unix_s: r.created_unix_s,
        clocks: crate::clocks::span(
            r.variants
                .iter()
                .filter_map(|v| v.timing.as_ref())
                .chain(
                    r.vendor
                        .iter()
                        .chain(&r.peers)
                        .filter_map(|p| p.timing.as_ref()),
                )
                .filter_map(|t| t.clocks.as_ref()),
        ),
    }
}

/// The warnings any two runs can earn: another GPU, another problem (as each run names it).
fn setting_warnings((base_gpu, new_gpu): (&str, &str), (bp, np): (&str, &str)) -> Vec<String> {
    let mut w = Vec::new();
    if base_gpu != new_gpu {
        w.push(format!(
            "different GPUs: BASE ran on {base_gpu}, NEW on {new_gpu}"
        ));
    }
    if bp != np {
        w.push(format!("different problems: BASE {bp}, NEW {np}"));
    }
    w
}

fn warnings<P>(base: &RunResults<P>, new: &RunResults<P>) -> Vec<String> {
    let mut w = mismatches(base, new);
    if let (Some(b), Some(n)) = (&base.ceiling, &new.ceiling)
        && !b.time.indistinguishable(&n.time)
    {
        w.push(format!(
            "the copy ceiling moved beyond its spread ({:.0} -> {:.0} GB/s): the machine changed, not only the code",
            b.gbps, n.gbps
        ));
    }
    let vendor = |r: &RunResults<P>| {
        let v = r.vendor.as_ref()?;
        Some((
            v.name.clone(),
            v.timing.as_ref()?.device,
            v.perf.as_ref()?.tflops,
        ))
    };
    if let (Some((name, b, bt)), Some((_, n, nt))) = (vendor(base), vendor(new))
        && !b.indistinguishable(&n)
    {
        w.push(format!(
            "{name} moved beyond its spread ({:.1} -> {:.1} TFLOP/s): the machine changed, not only the code",
            bt.unwrap_or(0.0),
            nt.unwrap_or(0.0)
        ));
    }
    w
}
