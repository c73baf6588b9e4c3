//! The row workloads' variants: every mechanism on row tiles, a tile height of its own where a
//! variant runs best with large boxes, and direct builds that regroup their threads; the controls;
//! and what a variant is within a run's build configuration (threads, slots, copy width, its
//! completion protocol in words, what this GPU allows).

use super::config::{BuildConfig, window_chunk};
use crate::pipeline::{Control, McaForm, Mechanism, Pipe, PipeBuild, Variant};
use serde::{Deserialize, Serialize};

/// A row variant's tile: its own size where it has one, and (direct only) how its threads are
/// grouped against the run's consumer threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RowShape {
    /// The tile size (KiB) this variant is built for, in place of the run's: TMA moves a whole
    /// tile per instruction and runs best with one block per SM and large boxes, while the
    /// per-thread copies want small tiles and several blocks per SM.
    #[serde(default)]
    pub tile_kib: Option<u32>,
    /// Direct only: each thread does the work of `fold` of the run's consumer threads, in a block
    /// `fold` times smaller, so it has `fold` times the loads in flight; the compute body keeps the
    /// run's summation order (and so `sync`'s results, bit for bit).
    #[serde(default = "one")]
    pub fold: u32,
    /// Direct only: each of the run's consumer threads is split over `split` threads, each holding
    /// a `split`-th of its vectors, in a block `split` times larger (fewer registers per thread,
    /// more threads per SM); the parts continue one sum in order, so the results stay `sync`'s.
    #[serde(default = "one")]
    pub split: u32,
    /// X's rows may start at any element: the staged copies move the aligned 16-byte windows that
    /// cover each row and the compute body reads it at its offset inside the window, TMA boxes
    /// start at the row's offset from an aligned base, direct shifts aligned loads in registers
    /// (kernels/common/rows.cuh). Set by `fit` where a view needs it.
    #[serde(default)]
    pub x_window: bool,
    /// Where every row of every view starts the same number of bytes into its chunk (a row stride
    /// of whole chunks): that number, built in, so the compute body's shift is a constant and not
    /// a selection made per vector at run time. Set by `fit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_shift: Option<u32>,
    /// The output's rows may start at any element: each 16-byte store that straddles two chunks
    /// is split into the aligned pieces inside the row. Set by `fit` where a view needs it.
    #[serde(default)]
    pub y_split: bool,
}

fn one() -> u32 {
    1
}

impl Default for RowShape {
    fn default() -> Self {
        RowShape {
            tile_kib: None,
            fold: 1,
            split: 1,
            x_window: false,
            x_shift: None,
            y_split: false,
        }
    }
}

pub type RowVariant = Variant<RowShape>;

/// A pipeline on the run's row tiles.
pub fn row(p: Pipe) -> RowVariant {
    p.shaped(RowShape::default())
}

/// Direct whose threads each do the work of `fold` of the run's consumer threads.
pub fn direct(fold: u32) -> RowVariant {
    let name = match fold {
        1 => "direct".to_string(),
        f => format!("direct-x{f}"),
    };
    Pipe::new(&name, Mechanism::Direct, 1, 16).shaped(RowShape {
        fold,
        ..RowShape::default()
    })
}

/// Direct whose threads each do a `split`-th of the work of one of the run's consumer threads.
pub fn direct_split(split: u32) -> RowVariant {
    let name = format!("direct-split{split}");
    Pipe::new(&name, Mechanism::Direct, 1, 16).shaped(RowShape {
        split,
        ..RowShape::default()
    })
}

/// `v` built for tiles of about `kib` KiB, named for it.
pub fn with_tile(v: RowVariant, kib: u32) -> RowVariant {
    Variant {
        name: format!("{}-{kib}k", v.name),
        shape: RowShape {
            tile_kib: Some(kib),
            ..v.shape
        },
        ..v
    }
}

/// The correct variants, sequential baseline first.
pub fn catalogue() -> Vec<RowVariant> {
    use Mechanism::*;
    let ring = |m, s, ws| row(Pipe::ring(m, s, ws));
    let mca = |m, f, s| row(Pipe::mca(m, f, s));
    let cp = |s, b| row(Pipe::cpasync(s, b));
    vec![
        row(Pipe::new("sync", Sync, 1, 16)),
        row(Pipe::new("regprefetch", Regprefetch, 2, 16)),
        direct(1),
        direct(2),
        direct_split(2),
        cp(2, 16),
        cp(2, 16).evict_last(),
        // bounds measured on the H200 (bf16 262144 x 4096): left to itself ptxas gave these 48
        // registers (32 and spills for the element forms), and their loops ran 1-7 % slower
        cp(3, 16).bounded(4),
        cp(4, 16),
        cp(2, 8),
        cp(2, 4),
        mca(MemcpyAsyncPipeline, McaForm::Aligned16, 2).bounded(4),
        mca(MemcpyAsyncPipeline, McaForm::Aligned16, 3),
        mca(MemcpyAsyncPipeline, McaForm::ElementAligned, 2).bounded(8),
        mca(MemcpyAsyncPipeline, McaForm::NotTriviallyCopyable, 2).bounded(4),
        mca(MemcpyAsyncBarrier, McaForm::Aligned16, 2),
        mca(MemcpyAsyncBarrier, McaForm::ElementAligned, 2).bounded(8),
        ring(Bulk, 2, false),
        ring(Bulk, 2, false).evict_last(),
        ring(Bulk, 3, false),
        ring(Tma, 2, false),
        ring(Tma, 3, false),
        ring(Tma, 4, false).bounded(4),
        ring(Tma, 4, false).bounded(4).evict_last(),
        ring(Tma, 3, true),
        ring(Tma, 4, true),
        with_tile(ring(Tma, 2, true), 64),
        with_tile(ring(Tma, 3, true), 64),
        with_tile(ring(Tma, 3, true), 64).evict_last(),
    ]
}

/// Deliberately broken variants; never timed or ranked. Direct has none: it has no completion
/// protocol of its own (no slot, no wait) for a control to break.
pub fn controls() -> Vec<RowVariant> {
    use Control::*;
    let cp = row(Pipe::cpasync(2, 16));
    let cp2 = cp.clone();
    let tma = row(Pipe::ring(Mechanism::Tma, 2, false));
    let tma_ws = row(Pipe::ring(Mechanism::Tma, 2, true));
    vec![
        Variant::control(cp.clone(), SkipWait, "ctl-cpasync-skip-wait"),
        Variant::control(cp.clone(), EarlyRelease, "ctl-cpasync-early-release"),
        Variant::control(cp.clone(), Overfill, "ctl-cpasync-overfill"),
        Variant::control(cp, CommitAfterWait, "ctl-cpasync-commit-after-wait"),
        Variant::control(
            row(Pipe::cpasync(3, 16)),
            DrainNoCommit,
            "ctl-cpasync-s3-drain-no-commit",
        ),
        Variant::control(tma.clone(), SkipWait, "ctl-tma-skip-wait"),
        Variant::control(tma_ws, EarlyRelease, "ctl-tma-ws-early-release"),
        Variant::control(tma.clone(), WrongParity, "ctl-tma-wrong-parity"),
        Variant::control(tma.clone(), NoExpectTx, "ctl-tma-no-expect-tx"),
        Variant::control(tma.clone(), WrongStride, "ctl-tma-wrong-stride"),
        Variant::control(cp2, WindowShift, "ctl-cpasync-window-shift"),
        Variant::control(tma, WindowUnshifted, "ctl-tma-window-unshifted"),
    ]
}

/// The build configuration of `v` within a run configured as `cfg`. Direct takes the run's tile
/// height like the staged variants (its compute body walks the tile's rows at X's stride). Its
/// block has the run's consumers / fold threads: the compute body still lays its reduction out for
/// the run's consumers (a block sized otherwise without folding, four vectors per thread for bf16
/// rows of 4096, rounded differently from `sync` and failed bit-for-bit validation).
pub fn config(v: &RowVariant, cfg: &BuildConfig) -> BuildConfig {
    let tile_rows = match v.shape.tile_kib {
        Some(kib) => BuildConfig::rows_for(cfg.hidden, cfg.dtype, kib),
        None => cfg.tile_rows,
    };
    let window_pad = match (v.shape.x_window, v.mechanism) {
        (false, _) | (true, Mechanism::Direct) => 0,
        (true, Mechanism::Tma) => {
            window_chunk(cfg.hidden, cfg.dtype).map_or(0, |chunk| (chunk * cfg.dtype.size()) as u32)
        }
        (true, _) => 16,
    };
    BuildConfig {
        tile_rows,
        consumers: cfg.consumers * v.shape.split / v.shape.fold,
        window_pad,
        ..*cfg
    }
}

pub fn threads(v: &RowVariant, cfg: &BuildConfig) -> u32 {
    cfg.consumers + if v.warp_specialized { 32 } else { 0 }
}

pub fn dynamic_smem(v: &RowVariant, cfg: &BuildConfig) -> u32 {
    v.slots() * cfg.slot_bytes()
}

/// Bytes one copy instruction moves for this configuration.
pub fn bytes_per_copy(v: &RowVariant, cfg: &BuildConfig) -> u32 {
    match v.mechanism {
        Mechanism::Bulk => cfg.row_bytes(),
        Mechanism::Tma => cfg.tile_rows as u32 * cfg.row_bytes(),
        Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => match v.mca_form {
            Some(McaForm::ElementAligned) => cfg.dtype.size() as u32,
            _ => 16,
        },
        _ => v.copy_bytes,
    }
}

/// The completion protocol, as the report names it (direct's with how its threads are grouped).
pub fn completion(v: &RowVariant, cfg: &BuildConfig) -> String {
    let protocol = match (v.mechanism, v.shape.fold, v.shape.split) {
        (Mechanism::Direct, f, s) if (f, s) != (1, 1) => {
            let grouping = match f {
                1 => format!(
                    " (a block of {} threads, each holding 1/{s} of one reduction thread's vectors and continuing its sum in turn)",
                    cfg.consumers
                ),
                f => format!(
                    " (a block of {} threads, each doing the work of {f})",
                    cfg.consumers
                ),
            };
            format!(
                "no staging: each thread loads its vectors of the tile straight into registers{grouping}; the compute body's own barrier orders the row reduction"
            )
        }
        _ => v.protocol(cfg.consumers),
    };
    let mut protocol = v.with_policy(protocol);
    if v.shape.x_window {
        protocol.push_str(match v.mechanism {
            Mechanism::Tma => {
                "; rows that start inside a 16-byte chunk: one map from the chunk of the view's first element, each row's boxes from its aligned chunk (one box more than the row), read at its offset in the slot"
            }
            Mechanism::Direct => {
                "; rows that start inside a 16-byte chunk: aligned 16-byte loads, shifted to the row in registers"
            }
            _ => {
                "; rows that start inside a 16-byte chunk: each copy moves the aligned chunks that cover the row, read at its offset in the slot"
            }
        });
    }
    if v.shape.y_split {
        protocol.push_str(
            "; output rows that start inside a chunk: stores split at 16-byte boundaries",
        );
    }
    protocol
}

/// Why `v` cannot run on this GPU at all, if it cannot.
pub fn unsupported_on(
    v: &RowVariant,
    sm: u32,
    smem_optin: u32,
    cfg: &BuildConfig,
) -> Option<String> {
    if let Some(why) = v.unfit(sm, smem_optin, cfg.slot_bytes()) {
        return Some(why);
    }
    if v.mechanism == Mechanism::Tma && cfg.tile_rows > 256 {
        return Some(format!(
            "a tile of {} rows exceeds the 256-row TMA box",
            cfg.tile_rows
        ));
    }
    None
}

/// The -D options that select `v`'s pipeline and precision in `cfg` (the workload adds its own).
pub fn defines(v: &RowVariant, cfg: &BuildConfig) -> Vec<String> {
    let mut d = v.defines(&PipeBuild {
        dtype: cfg.dtype,
        consumers: cfg.consumers,
        instrument: cfg.instrument,
        fold: v.shape.fold,
        split: v.shape.split,
    });
    // only where set, so that every aligned build's cache key and SASS stay as they were
    if v.shape.x_window {
        d.push("-DX_WINDOW=1".into());
        if let Some(shift) = v.shape.x_shift {
            d.push(format!("-DX_SHIFT_BYTES={shift}"));
        }
        if v.mechanism == Mechanism::Tma
            && let Some(chunk) = window_chunk(cfg.hidden, cfg.dtype)
        {
            d.push(format!("-DTMA_CHUNK={chunk}"));
        }
    }
    if v.shape.y_split {
        d.push("-DY_SPLIT=1".into());
    }
    d
}

#[cfg(test)]
#[path = "catalogue_tests.rs"]
mod tests;
