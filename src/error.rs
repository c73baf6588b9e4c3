//! Typed errors of the library. Each message says what was wrong and what is allowed; the binary
//! prints it on one line and exits non-zero.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no CUDA driver: {detail}. tilepipe needs an NVIDIA driver (libcuda.so) and an sm_70 or newer GPU (sm_80 for cp.async); \
         host-only commands (sass --arch, inspect, report, compare, merge, model, lab queue) work without one"
    )]
    NoDriver { detail: String },

    #[error("no CUDA GPU visible ({detail}); check nvidia-smi and CUDA_VISIBLE_DEVICES")]
    NoGpu { detail: String },

    #[error("GPU {ordinal} requested but only {count} visible (allowed: 0..{count})")]
    BadDevice { ordinal: usize, count: usize },

    #[error(
        "architecture sm_{major}{minor} is too old: tilepipe needs sm_70 or newer (cp.async sm_80, TMA and bulk sm_90)"
    )]
    ArchTooOld { major: i32, minor: i32 },

    #[error(
        "NVRTC not found: {detail}. Install a CUDA toolkit (libnvrtc.so) or put its lib folder on LD_LIBRARY_PATH"
    )]
    NoNvrtc { detail: String },

    #[error("invalid shape: {0}")]
    InvalidShape(String),

    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("variant {variant} cannot take this view: {reason}")]
    Unsupported { variant: String, reason: String },

    #[error("tensor map rejected: {0}")]
    TensorMap(String),

    #[error("compiling {kernel} for {arch} failed (options: {options}):\n{log}")]
    Compile {
        kernel: String,
        arch: String,
        options: String,
        log: String,
    },

    #[error(
        "out of device memory: {what} needs {needed} bytes ({} MiB), {free} bytes ({} MiB) free; use fewer --tokens or a smaller --hidden",
        needed >> 20,
        free >> 20
    )]
    OutOfMemory {
        what: String,
        /// Bytes asked for.
        needed: u64,
        /// Bytes the device had free (cuMemGetInfo).
        free: u64,
    },

    #[error("CUDA call {call} failed: {detail}")]
    Cuda { call: String, detail: String },

    #[error(
        "pipeline wait timed out (block {block}, stage {stage}, phase {parity}, {role}, the block's tile {tile}) in {variant}"
    )]
    WaitTimeout {
        variant: String,
        block: u32,
        stage: u32,
        parity: u32,
        role: String,
        /// k: the block's k-th tile (0-based) whose wait timed out.
        tile: u32,
    },

    #[error(
        "kernel {variant} did not finish within {seconds} s; the GPU may need the process to exit"
    )]
    Hung { variant: String, seconds: u64 },

    /// A monitored launch that faulted the context, with what its monitor's trail had recorded.
    #[error("{cause}; before the fault its monitor recorded {trail}")]
    FaultAfter { cause: Box<Error>, trail: String },

    #[error("{variant} faulted the GPU context ({case}): {cause}")]
    ContextLost {
        variant: String,
        case: String,
        cause: Box<Error>,
    },

    #[error("the process that went on after a fault failed: {detail}")]
    InChild { detail: String },

    #[error("interrupted (Ctrl-C)")]
    Interrupted,

    #[error("disassembler failed on {what}: {detail}")]
    Disassembler { what: String, detail: String },

    /// The OS error is part of the message and deliberately not a `source()`: printing the
    /// chain (`{:#}`) would otherwise say it twice.
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },

    #[error("{path}: {detail}")]
    Format { path: PathBuf, detail: String },

    #[error("queue lab: {0}")]
    Lab(String),

    #[error("protocol monitor log: {0}")]
    MonitorLog(String),

    /// A monitored launch whose monitor recorded broken rules (the log says which, where).
    #[error("{variant}: {log}")]
    Protocol { variant: String, log: String },
}

impl Error {
    /// Whether a recorded failure (a result's detail) says an in-kernel wait timed out: the
    /// launch ended cleanly, so its monitored build can run again to name the broken rule.
    pub fn names_wait_timeout(detail: &str) -> bool {
        detail.contains("pipeline wait timed out (")
    }

    pub fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            cause,
        }
    }

    pub fn cuda(call: &str, detail: impl std::fmt::Display) -> Self {
        Error::Cuda {
            call: call.to_string(),
            detail: detail.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_names_the_bytes_asked_and_free() {
        let e = Error::OutOfMemory {
            what: "the output Y".into(),
            needed: 3 << 30,
            free: (1 << 30) + 5,
        };
        assert_eq!(
            e.to_string(),
            "out of device memory: the output Y needs 3221225472 bytes (3072 MiB), 1073741829 bytes (1024 MiB) free; \
             use fewer --tokens or a smaller --hidden"
        );
    }

    #[test]
    fn an_os_error_is_in_the_message_once_and_not_again_as_a_source() {
        let e = Error::io(
            "out/x.html",
            std::io::Error::from_raw_os_error(21), // EISDIR
        );
        assert!(std::error::Error::source(&e).is_none());
        let shown = format!("{:#}", anyhow::Error::new(e).context("writing the report"));
        assert_eq!(shown.matches("os error 21").count(), 1, "{shown}");
        assert!(
            shown.starts_with("writing the report: out/x.html: "),
            "{shown}"
        );
    }

    #[test]
    fn a_recorded_wait_timeout_is_recognised_and_nothing_else_is() {
        let e = Error::WaitTimeout {
            variant: "tma-s2".into(),
            block: 3,
            stage: 1,
            parity: 0,
            role: "consumer".into(),
            tile: 7,
        };
        assert!(Error::names_wait_timeout(&format!("tail tile: {e}")));
        let hung = Error::Hung {
            variant: "tma-s2".into(),
            seconds: 120,
        };
        assert!(!Error::names_wait_timeout(&hung.to_string()));
        assert!(!Error::names_wait_timeout(
            "rel L2 error 1.7 > 1e-5; 262127 elements beyond tolerance"
        ));
    }
}
