//! NVRTC: CUDA C++ to a cubin for one architecture (never PTX-only), with the log kept.

use crate::{Error, Result};
use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};
use std::ffi::{CString, c_char};

fn present() -> Result<()> {
    // SAFETY: only tries to dlopen libnvrtc; no NVRTC call is made.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::NoNvrtc {
            detail: "libnvrtc.so could not be loaded".into(),
        })
    }
}

fn check(call: &str, r: nvrtcResult) -> Result<()> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::cuda(call, format!("{r:?}")))
    }
}

/// NVRTC's (major, minor).
pub fn version() -> Result<(i32, i32)> {
    present()?;
    let (mut a, mut b) = (0, 0);
    // SAFETY: writes two ints.
    check("nvrtcVersion", unsafe { sys::nvrtcVersion(&mut a, &mut b) })?;
    Ok((a, b))
}

pub struct Compiled {
    pub cubin: Vec<u8>,
    pub log: String,
}

/// Compiles `source` with `headers` (include name, text) under `options`. On failure the error
/// carries the NVRTC log, the options and the kernel's name.
pub fn compile(
    source: &str,
    headers: &[(&str, &str)],
    kernel: &str,
    options: &[String],
) -> Result<Compiled> {
    present()?;
    let c = |s: &str| CString::new(s).expect("no NUL in kernel sources or options");
    let src = c(source);
    let name = c(&format!("{kernel}.cu"));
    let hdr_text: Vec<CString> = headers.iter().map(|(_, t)| c(t)).collect();
    let hdr_name: Vec<CString> = headers.iter().map(|(n, _)| c(n)).collect();
    let hdr_text_p: Vec<*const c_char> = hdr_text.iter().map(|s| s.as_ptr()).collect();
    let hdr_name_p: Vec<*const c_char> = hdr_name.iter().map(|s| s.as_ptr()).collect();
    let opts: Vec<CString> = options.iter().map(|o| c(o)).collect();
    let opts_p: Vec<*const c_char> = opts.iter().map(|s| s.as_ptr()).collect();
    let mut prog: nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer refers to a NUL-terminated CString alive until the program is destroyed
    // at the end of this function; the header arrays have equal lengths.
    unsafe {
        check(
            "nvrtcCreateProgram",
            sys::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                headers.len() as i32,
                hdr_text_p.as_ptr(),
                hdr_name_p.as_ptr(),
            ),
        )?;
        let compiled = sys::nvrtcCompileProgram(prog, opts_p.len() as i32, opts_p.as_ptr());
        let log = program_log(prog);
        let out = if compiled == nvrtcResult::NVRTC_SUCCESS {
            let mut size = 0usize;
            check("nvrtcGetCUBINSize", sys::nvrtcGetCUBINSize(prog, &mut size)).and_then(|_| {
                let mut cubin = vec![0u8; size];
                check(
                    "nvrtcGetCUBIN",
                    sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char),
                )?;
                if size == 0 {
                    return Err(Error::cuda(
                        "nvrtcGetCUBIN",
                        "empty cubin (was a virtual architecture given?)",
                    ));
                }
                Ok(Compiled {
                    cubin,
                    log: log.clone(),
                })
            })
        } else {
            Err(Error::Compile {
                kernel: kernel.to_string(),
                arch: options
                    .iter()
                    .find(|o| o.starts_with("--gpu-architecture"))
                    .cloned()
                    .unwrap_or_default(),
                options: options.join(" "),
                log,
            })
        };
        sys::nvrtcDestroyProgram(&mut prog);
        out
    }
}

/// SAFETY (caller): `prog` is a live program.
unsafe fn program_log(prog: nvrtcProgram) -> String {
    let mut size = 0usize;
    // SAFETY: prog is live (caller); the buffer has the size NVRTC reported.
    unsafe {
        if sys::nvrtcGetProgramLogSize(prog, &mut size) != nvrtcResult::NVRTC_SUCCESS || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        if sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char)
            != nvrtcResult::NVRTC_SUCCESS
        {
            return String::new();
        }
        String::from_utf8_lossy(&buf)
            .trim_end_matches('\0')
            .trim()
            .to_string()
    }
}
