//! What a row variant needs of a view: the register-staged mechanisms narrow their copy unit to
//! take any element-aligned view; the others read aligned windows of rows that start inside a
//! 16-byte chunk (TMA as long as one row stride describes them), split their stores where the
//! output's rows do, and otherwise need what their copies need; the controls need views they can
//! break.

use super::View;
use super::catalogue::RowVariant;
use super::config::BuildConfig;
use super::params::{row_map, window_map};
use super::view::CHUNK;
use crate::pipeline::{Control, McaForm, Mechanism};

/// Whether `v`'s copies must move aligned windows to read rows that start inside a chunk:
/// every mechanism but register staging (which narrows its copies) and memcpy_async spelled on
/// elements (whose copies take any element); cp.async only where its own width does not divide
/// the rows' offsets.
fn needs_window(v: &RowVariant, view: &View, es: usize) -> bool {
    let align = match v.mechanism {
        Mechanism::Sync | Mechanism::Regprefetch => return false,
        Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier
            if v.mca_form == Some(McaForm::ElementAligned) =>
        {
            return false;
        }
        Mechanism::Cpasync => v.copy_bytes as usize,
        _ => CHUNK,
    };
    !(view.offset * es).is_multiple_of(align) || !(view.row_stride * es).is_multiple_of(align)
}

/// `v` fitted to every view it will run on: the register-staged mechanisms (the sequential
/// baseline among them) narrow their copy unit, down to one element, until it divides each view's
/// offset and row stride in bytes; the others read windows where a view's rows start inside a
/// chunk their copies need whole; every variant splits its stores where an output's rows do.
pub fn fit(v: &RowVariant, views: &[View], cfg: &BuildConfig) -> RowVariant {
    let mut fitted = v.clone();
    let es = cfg.dtype.size();
    if matches!(v.mechanism, Mechanism::Sync | Mechanism::Regprefetch) {
        let divides = |b: usize, view: &View| {
            (view.offset * es).is_multiple_of(b) && (view.row_stride * es).is_multiple_of(b)
        };
        let mut b = v.copy_bytes as usize;
        while b > es && !views.iter().all(|view| divides(b, view)) {
            b /= 2;
        }
        fitted.copy_bytes = b as u32;
    }
    fitted.shape.x_window |= views.iter().any(|view| needs_window(v, view, es));
    fitted.shape.x_shift = shared_shift(views, es).filter(|_| fitted.shape.x_window);
    fitted.shape.y_split |= views.iter().any(|view| !view.out_aligned(cfg.dtype));
    fitted
}

/// The bytes every row of every view starts into its 16-byte chunk, where that is one number:
/// each row stride a whole number of chunks (the allocations start on chunks) and one offset.
fn shared_shift(views: &[View], es: usize) -> Option<u32> {
    let shift = |view: &View| {
        (view.row_stride * es)
            .is_multiple_of(CHUNK)
            .then_some((view.offset * es % CHUNK) as u32)
    };
    let first = shift(views.first()?)?;
    views
        .iter()
        .all(|w| shift(w) == Some(first))
        .then_some(first)
}

/// Why `v` cannot take this view, if it cannot: each mechanism's alignment (met by windows where
/// `v` reads them), a tensor map TMA can describe, an output its stores can write, views the
/// controls can break.
pub fn can_implement(v: &RowVariant, view: &View, cfg: &BuildConfig) -> Result<(), String> {
    let es = cfg.dtype.size();
    if v.shape.x_window {
        if v.mechanism == Mechanism::Cpasync && v.l2_evict_last {
            return Err(
                "NVRTC 13.0 builds a window's cp.async with an L2 policy as an LDGSTS whose uniform operands are \
                 registers nothing wrote, an illegal instruction on sm_90 (measured on H100 and H200); \
                 cp.async without the policy reads this view"
                    .into(),
            );
        }
        if v.mechanism == Mechanism::Tma && !(cfg.row_bytes() as usize).is_multiple_of(128) {
            return Err(format!(
                "rows of {} B: a tensor copy lands at a 128-byte-aligned shared address, and the boxes of rows \
                 that start inside 16-byte chunks land a row apart; cp.async, bulk and direct read windows instead",
                cfg.row_bytes()
            ));
        }
        if v.mechanism == Mechanism::Tma && !(view.row_stride * es).is_multiple_of(CHUNK) {
            return Err(format!(
                "rows of more than one alignment: a tensor map's row stride must be a multiple of 16 bytes and \
                 {} B is not (one descriptor cannot start each row at its own offset); cp.async, bulk and direct \
                 read aligned windows of these rows instead",
                view.row_stride * es
            ));
        }
    } else if needs_window(v, view, es) {
        let align = match v.mechanism {
            Mechanism::Cpasync => v.copy_bytes as usize,
            _ => CHUNK,
        };
        return Err(format!(
            "rows must start {align}-byte aligned: offset {} B and row stride {} B must be multiples of {align} \
             (a build fitted to this view reads aligned windows)",
            view.offset * es,
            view.row_stride * es
        ));
    }
    let unit = v.copy_bytes as usize;
    if matches!(v.mechanism, Mechanism::Sync | Mechanism::Regprefetch)
        && (!(view.offset * es).is_multiple_of(unit)
            || !(view.row_stride * es).is_multiple_of(unit))
    {
        return Err(format!(
            "rows must start {unit}-byte aligned for {unit}-byte copies: offset {} B and row stride {} B \
             (a build fitted to this view narrows its copies)",
            view.offset * es,
            view.row_stride * es
        ));
    }
    if !v.shape.y_split && !view.out_aligned(cfg.dtype) {
        let o = view.out_layout();
        return Err(format!(
            "the output's rows must start 16-byte aligned for 16-byte stores: offset {} B and row stride {} B \
             (a build fitted to this output splits its stores)",
            o.offset * es,
            o.row_stride * es
        ));
    }
    if v.mechanism == Mechanism::Tma {
        let map = match v.shape.x_window {
            true => window_map(view, cfg.dtype, 0, None),
            false => row_map(view, cfg.dtype, cfg.tile_rows, 0, None),
        };
        if let Err(e) = map {
            return Err(format!("no valid tensor map: {e}"));
        }
    }
    match v.control {
        Some(Control::WrongStride) if view.row_stride < view.hidden + 16 / es => {
            Err("the wrong-stride control needs a view strided by at least 16 bytes".into())
        }
        Some(Control::WindowShift | Control::WindowUnshifted) if view.rows_aligned(cfg.dtype) => {
            Err(format!(
                "the {} control needs rows that start inside a 16-byte chunk (its fault is in their offset)",
                v.name
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::pipeline::Pipe;
    use crate::workload::rows::catalogue::{self, row};

    #[test]
    fn the_baseline_fits_any_element_aligned_view() {
        let all = catalogue::catalogue();
        let by = |n: &str| all.iter().find(|v| v.name == n).unwrap().clone();
        let (sync, cp) = (by("sync"), by("cpasync-cg16-s2"));
        let view =
            |stride, offset, dt| View::new(64, 4096, Some(stride), offset, None, dt).unwrap();
        for (dt, stride, offset, want) in [
            (DType::Bf16, 4096, 0, 16),
            (DType::Bf16, 4096, 1, 2),
            (DType::Bf16, 4100, 0, 8),
            (DType::F16, 4098, 4, 4),
            (DType::F32, 4096, 3, 4),
            (DType::F32, 4098, 0, 8),
        ] {
            let cfg = BuildConfig::new(dt, 4096, None);
            let v = view(stride, offset, dt);
            let fitted = fit(&sync, &[v], &cfg);
            assert_eq!(
                fitted.copy_bytes, want,
                "{dt} stride {stride} offset {offset}"
            );
            assert_eq!(can_implement(&fitted, &v, &cfg), Ok(()));
            // the fitted unit divides every view at once
            let aligned = view(4096, 0, dt);
            assert_eq!(fit(&sync, &[aligned, v], &cfg).copy_bytes, want);
            // other mechanisms are not narrowed: they read windows where their copies need them
            let f = fit(&cp, &[v], &cfg);
            assert_eq!(f.copy_bytes, 16);
            assert_eq!(
                f.shape.x_window,
                want < 16,
                "{dt} stride {stride} offset {offset}"
            );
            assert_eq!(can_implement(&f, &v, &cfg), Ok(()));
            if want < 16 {
                let why = can_implement(&cp, &v, &cfg).unwrap_err();
                assert!(why.contains("16-byte aligned"), "{why}");
            }
        }
    }

    #[test]
    fn a_shift_every_row_shares_is_built_in() {
        let c = BuildConfig::new(DType::Bf16, 3072, None);
        let cp = row(Pipe::cpasync(2, 16));
        let view =
            |stride, offset| View::new(100, 3072, Some(stride), offset, None, DType::Bf16).unwrap();
        let shift = |views: &[View]| fit(&cp, views, &c).shape.x_shift;
        // rows 6400 B apart, each 2 bytes into its chunk; offsets 7 and 15 both land 14 bytes in
        let one = fit(&cp, &[view(3200, 1)], &c);
        assert_eq!(one.shape.x_shift, Some(2));
        assert!(catalogue::defines(&one, &c).contains(&"-DX_SHIFT_BYTES=2".to_string()));
        assert_eq!(shift(&[view(3200, 7), view(3200, 15)]), Some(14));
        // rows 6146 B apart start at every even byte of a chunk; two offsets are two shifts
        assert_eq!(shift(&[view(3073, 0)]), None);
        assert_eq!(shift(&[view(3200, 1), view(3200, 2)]), None);
        // an aligned view reads no window, and nothing is built in
        let aligned = fit(&cp, &[view(3200, 8)], &c);
        assert_eq!(
            (aligned.shape.x_window, aligned.shape.x_shift),
            (false, None)
        );
        assert!(
            !catalogue::defines(&aligned, &c)
                .iter()
                .any(|d| d.starts_with("-DX_SHIFT_BYTES"))
        );
    }

    #[test]
    fn each_mechanism_names_what_it_needs_of_a_view() {
        let c = BuildConfig::new(DType::Bf16, 4096, None);
        let cp = row(Pipe::cpasync(2, 16));
        let ok = View::new(100, 4096, Some(4160), 64, None, DType::Bf16).unwrap();
        assert_eq!(can_implement(&cp, &ok, &c), Ok(()));
        let odd = View::new(100, 4096, Some(4100), 4, None, DType::Bf16).unwrap();
        let why = can_implement(&cp, &odd, &c).unwrap_err();
        assert!(why.contains("16-byte aligned"), "{why}");
        // 4-byte copies take rows aligned to 4 bytes
        assert_eq!(can_implement(&row(Pipe::cpasync(2, 4)), &odd, &c), Ok(()));
        let tma = row(Pipe::ring(Mechanism::Tma, 2, false));
        let why = can_implement(&tma, &odd, &c).unwrap_err();
        assert!(why.contains("aligned"), "{why}");
        // direct reads 16-byte vectors in place; a build fitted to rows inside chunks shifts them
        let direct = catalogue::direct(1);
        assert_eq!(can_implement(&direct, &ok, &c), Ok(()));
        let why = can_implement(&direct, &odd, &c).unwrap_err();
        assert!(why.contains("16-byte aligned"), "{why}");
        assert_eq!(fit(&direct, &[ok], &c), direct);
        let shifted = fit(&direct, &[ok, odd], &c);
        assert!(shifted.shape.x_window && shifted.copy_bytes == 16);
        assert_eq!(can_implement(&shifted, &odd, &c), Ok(()));
        let dense = View::new(100, 4096, None, 0, None, DType::Bf16).unwrap();
        let ctl = catalogue::controls()
            .into_iter()
            .find(|v| v.control == Some(Control::WrongStride))
            .unwrap();
        assert!(
            can_implement(&ctl, &dense, &c)
                .unwrap_err()
                .contains("strided")
        );
        assert_eq!(can_implement(&ctl, &ok, &c), Ok(()));
    }

    /// The configuration each variant builds with on this view (its own tile, windows in slots).
    fn config_of(v: &RowVariant, dt: DType, h: usize) -> BuildConfig {
        catalogue::config(v, &BuildConfig::new(dt, h, None))
    }

    /// Row variants that take `view` once fitted to it, and the refusals of the others.
    fn taken(view: &View, dt: DType) -> (Vec<String>, Vec<(String, String)>) {
        let (mut ok, mut no) = (Vec::new(), Vec::new());
        for v in catalogue::catalogue() {
            let f = fit(&v, &[*view], &config_of(&v, dt, view.hidden));
            match can_implement(&f, view, &config_of(&f, dt, view.hidden)) {
                Ok(()) => ok.push(f.name),
                Err(why) => no.push((f.name, why)),
            }
        }
        (ok, no)
    }

    /// Offsets of 1, 2, 3 and 7 elements at a whole-chunk row stride take every row variant but
    /// the evict-last cp.async, refused with the toolchain's fault; row strides of hidden plus 1
    /// and plus 3 take all but TMA, which names its rule, and that one. Unfitted, the same
    /// variants are refused (the fit is what takes the view).
    #[test]
    fn every_variant_takes_rows_inside_chunks_and_tma_one_row_stride() {
        for dt in [DType::Bf16, DType::F32] {
            let all = catalogue::catalogue().len();
            for offset in [1, 2, 3, 7] {
                let view = View::new(4099, 3072, Some(3200), offset, None, dt).unwrap();
                let (ok, no) = taken(&view, dt);
                assert_eq!(ok.len(), all - 1, "{dt} offset {offset}: {no:?}");
                assert!(no[0].0.ends_with("-el") && no[0].1.contains("illegal instruction"));
                let refused = catalogue::catalogue()
                    .iter()
                    .filter(|v| can_implement(v, &view, &config_of(v, dt, 3072)).is_err())
                    .count();
                assert!(
                    refused >= 20,
                    "{dt} offset {offset}: only {refused} refused unfitted"
                );
            }
            for extra in [1, 3] {
                let view = View::new(4099, 3072, Some(3072 + extra), 0, None, dt).unwrap();
                let (ok, no) = taken(&view, dt);
                for (name, why) in no.iter().filter(|(n, _)| !n.starts_with("cpasync")) {
                    assert!(name.starts_with("tma"), "{dt} +{extra}: {name}: {why}");
                    assert!(why.contains("multiple of 16 bytes"), "{why}");
                }
                assert_eq!(no.len(), 10, "{dt} +{extra}: the nine TMA variants and -el");
                for prefix in ["cpasync", "bulk", "direct"] {
                    assert!(ok.iter().any(|n| n.starts_with(prefix)), "{prefix}");
                }
                assert_eq!(ok.len() + no.len(), all);
            }
        }
    }

    #[test]
    fn an_output_inside_chunks_splits_every_variants_stores() {
        let dt = DType::Bf16;
        let c = BuildConfig::new(dt, 4096, None);
        let aligned = View::new(64, 4096, None, 0, None, dt).unwrap();
        for (stride, offset) in [(None, 3), (Some(4099), 0), (Some(4104), 8)] {
            let view = aligned.with_out(stride, offset, dt).unwrap();
            let split = !(offset * 2).is_multiple_of(16) || stride == Some(4099);
            for v in catalogue::catalogue() {
                let f = fit(&v, &[view], &c);
                assert_eq!(f.shape.y_split, split, "{} {stride:?} {offset}", v.name);
                assert!(!f.shape.x_window, "X is aligned");
                if split {
                    let why = can_implement(&v, &view, &c).unwrap_err();
                    assert!(
                        why.contains("output's rows must start 16-byte aligned"),
                        "{why}"
                    );
                }
            }
        }
        assert!(
            !fit(&catalogue::catalogue()[0], &[aligned], &c)
                .shape
                .y_split
        );
    }

    #[test]
    fn the_window_controls_need_rows_inside_chunks() {
        let dt = DType::Bf16;
        let c = BuildConfig::new(dt, 4096, None);
        let ctl = |k| {
            catalogue::controls()
                .into_iter()
                .find(|v| v.control == Some(k))
                .unwrap()
        };
        let aligned = View::new(64, 4096, Some(4160), 64, None, dt).unwrap();
        let inside = View::new(64, 4096, Some(4160), 65, None, dt).unwrap();
        let every = View::new(64, 4096, Some(4161), 65, None, dt).unwrap();
        for k in [Control::WindowShift, Control::WindowUnshifted] {
            let v = ctl(k);
            let why = can_implement(&fit(&v, &[aligned], &c), &aligned, &c).unwrap_err();
            assert!(why.contains("inside a 16-byte chunk"), "{why}");
            assert_eq!(can_implement(&fit(&v, &[inside], &c), &inside, &c), Ok(()));
        }
        let tma = fit(&ctl(Control::WindowUnshifted), &[every], &c);
        assert!(
            can_implement(&tma, &every, &c)
                .unwrap_err()
                .contains("multiple of 16 bytes")
        );
        let cp = fit(&ctl(Control::WindowShift), &[every], &c);
        assert_eq!(can_implement(&cp, &every, &c), Ok(()));
    }
}
