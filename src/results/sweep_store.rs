//! The sweep's JSONL file: one record per line, appended and synced as each point lands. Reading
//! names every line it cannot use; resuming first cuts a torn last line (a crash mid-write) off
//! the file, so that the next record starts on a line of its own.

use super::sweep::Record;
use crate::{Error, Result};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

/// A line that holds no record, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// 1-based, as an editor counts.
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

/// What a sweep file holds: its records and the lines that are not records.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub records: Vec<Record>,
    pub skipped: Vec<Skipped>,
    /// Non-blank lines seen, records and skipped together.
    pub lines: usize,
}

/// What `resume` found: the points already measured, and what it did to the file or could not use.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resumed {
    pub done: BTreeSet<String>,
    pub warnings: Vec<String>,
}

/// The records of a sweep file. A missing or unreadable file is an error naming it; lines that
/// are not records (a torn last line among them) are listed in `skipped`, never dropped unsaid.
pub fn read(path: &Path) -> Result<Loaded> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Ok(parse(&bytes))
}

/// Refuses `loaded` (read from `path`) when it holds another workload's points: its keys do not
/// name the workload, so they would pass for done.
fn same_workload(path: &Path, loaded: &Loaded, workload: &str) -> Result<()> {
    match loaded.records.iter().find(|r| r.workload != workload) {
        Some(other) => Err(Error::InvalidArgument(format!(
            "{} holds points of the {} workload; --resume continues a sweep of the same workload \
             ({workload} here): give another --out",
            path.display(),
            other.workload
        ))),
        None => Ok(()),
    }
}

/// What `resume` would refuse in `path`, judged before anything is written and changing nothing.
pub fn can_resume(path: &Path, workload: &str) -> Result<()> {
    match std::fs::read(path) {
        Ok(bytes) => same_workload(path, &parse(&bytes[..complete_len(&bytes)]), workload),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Prepares `path` for more points: a last line without its newline is cut off the file (it is a
/// write a crash interrupted; appending after it would glue the next record onto it), and each
/// line that is not a record is named. A missing file is a sweep not begun; a file of another
/// workload's points is refused (its keys do not name the workload, so they would pass for done).
pub fn resume(path: &Path, workload: &str) -> Result<Resumed> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Resumed::default()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut warnings = Vec::new();
    let complete = complete_len(&bytes);
    if complete < bytes.len() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| {
                f.set_len(complete as u64)?;
                f.sync_all()
            })
            .map_err(|e| Error::io(path, e))?;
        warnings.push(format!(
            "{}: cut a torn last line of {} bytes before resuming",
            path.display(),
            bytes.len() - complete
        ));
    }
    let loaded = parse(&bytes[..complete]);
    same_workload(path, &loaded, workload)?;
    warnings.extend(loaded.skipped.iter().map(|s| {
        format!(
            "{} {s}; left in the file, its point (if any) is measured again",
            path.display()
        )
    }));
    Ok(Resumed {
        done: loaded.records.into_iter().map(|r| r.key).collect(),
        warnings,
    })
}

/// The points already in `path`, from its complete lines only, changing nothing: what a worker of
/// `sweep --devices` reads while its siblings append to the same file (a line being written is
/// not yet complete, and must not be cut). A missing file holds none.
pub fn measured(path: &Path) -> Result<BTreeSet<String>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let complete = complete_len(&bytes);
    Ok(parse(&bytes[..complete])
        .records
        .into_iter()
        .map(|r| r.key)
        .collect())
}

/// Appends one record as one write of a whole line and syncs it before returning.
pub fn append(path: &Path, r: &Record) -> Result<()> {
    let mut line = serde_json::to_string(r).expect("records serialise");
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| {
            f.write_all(line.as_bytes())?;
            f.sync_data()
        })
        .map_err(|e| Error::io(path, e))
}

/// Bytes up to and including the last newline: the complete lines.
fn complete_len(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

fn parse(bytes: &[u8]) -> Loaded {
    let complete = complete_len(bytes);
    let mut out = Loaded {
        records: Vec::new(),
        skipped: Vec::new(),
        lines: 0,
    };
    let mut lines: Vec<&[u8]> = bytes[..complete].split(|&b| b == b'\n').collect();
    // the split leaves an empty piece after the final newline
    lines.pop();
    for (i, raw) in lines.iter().enumerate() {
        if raw.trim_ascii().is_empty() {
            continue;
        }
        out.lines += 1;
        let why = match std::str::from_utf8(raw) {
            Err(_) => "not UTF-8 text".to_string(),
            Ok(text) => match serde_json::from_str::<Record>(text) {
                // a peer has no stages or blocks: the model never takes it, and it is a point still
                Ok(r) => match r
                    .is_own()
                    .then(|| crate::model::refusal(r.stages as usize, r.steps_per_block))
                    .flatten()
                {
                    None => {
                        out.records.push(r);
                        continue;
                    }
                    Some(why) => format!("a sweep record the model cannot take: {why}"),
                },
                Err(e) => format!("not a sweep record ({e})"),
            },
        };
        out.skipped.push(Skipped { line: i + 1, why });
    }
    if complete < bytes.len() {
        out.lines += 1;
        out.skipped.push(Skipped {
            line: lines.len() + 1,
            why: format!(
                "torn last line ({} bytes without a newline: a write was cut off)",
                bytes.len() - complete
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::results::sweep::key;
    use crate::results::sweep::tests::record;

    fn torn_file(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("sweep.jsonl");
        append(&p, &record("sync", 0, 1, 64, 0.1)).unwrap();
        append(&p, &record("cpasync-cg16-s2", 0, 2, 64, 0.09)).unwrap();
        // a crash mid-write leaves half a line
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"{\"key\": \"half")
            .unwrap();
        p
    }

    #[test]
    fn reading_names_the_torn_line_and_keeps_the_records() {
        let d = tempfile::tempdir().unwrap();
        let p = torn_file(d.path());
        let l = read(&p).unwrap();
        assert_eq!(l.records.len(), 2);
        assert_eq!(l.records[1].variant, "cpasync-cg16-s2");
        assert_eq!(l.lines, 3);
        assert_eq!(l.skipped.len(), 1);
        assert_eq!(l.skipped[0].line, 3);
        assert!(l.skipped[0].why.contains("torn last line (13 bytes"));
    }

    #[test]
    fn a_record_the_model_cannot_take_is_a_named_skip() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sweep.jsonl");
        append(&p, &record("sync", 0, 1, 64, 0.1)).unwrap();
        let mut huge = record("cpasync-cg16-s2", 0, 2, 64, 0.1);
        huge.steps_per_block = 1_000_000_000_000_000;
        append(&p, &huge).unwrap();
        let l = read(&p).unwrap();
        assert_eq!(l.records.len(), 1);
        assert_eq!(l.skipped[0].line, 2);
        assert!(
            l.skipped[0]
                .why
                .contains("model cannot take: tiles_per_block 1000000000000000"),
            "{}",
            l.skipped[0].why
        );
    }

    #[test]
    fn resuming_cuts_the_torn_line_and_appends_whole_records_after_it() {
        let d = tempfile::tempdir().unwrap();
        let p = torn_file(d.path());
        let before = std::fs::read(&p).unwrap().len();
        let r = resume(&p, "rmsnorm").unwrap();
        assert_eq!(
            r.warnings,
            [format!(
                "{}: cut a torn last line of 13 bytes before resuming",
                p.display()
            )]
        );
        assert_eq!(std::fs::read(&p).unwrap().len(), before - 13);
        assert!(
            r.done
                .contains(&key("sync", 0, DType::Bf16, "h4096|r2|t64"))
        );
        assert!(
            !r.done
                .contains(&key("sync", 0, DType::Bf16, "h4096|r2|t128"))
        );
        append(&p, &record("sync", 0, 1, 128, 0.2)).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        for line in text.lines() {
            serde_json::from_str::<Record>(line).unwrap();
        }
        let l = read(&p).unwrap();
        assert_eq!((l.records.len(), l.skipped.len()), (3, 0));
        // a second resume finds nothing to cut
        assert!(resume(&p, "rmsnorm").unwrap().warnings.is_empty());
    }

    #[test]
    fn complete_lines_that_are_not_records_are_named_by_number() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sweep.jsonl");
        append(&p, &record("sync", 0, 1, 64, 0.1)).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"\n{\"key\": 3}\n\xff\xfe\n").unwrap();
        append(&p, &record("sync", 0, 1, 128, 0.1)).unwrap();
        let l = read(&p).unwrap();
        assert_eq!(l.records.len(), 2);
        let lines: Vec<usize> = l.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [3, 4]);
        assert!(
            l.skipped[0]
                .to_string()
                .starts_with("line 3: not a sweep record (")
        );
        assert_eq!(l.skipped[1].why, "not UTF-8 text");
        let r = resume(&p, "rmsnorm").unwrap();
        assert_eq!(r.done.len(), 2);
        assert_eq!(r.warnings.len(), 2);
        assert!(r.warnings[0].contains("sweep.jsonl line 3: not a sweep record"));
    }

    #[test]
    fn resuming_another_workloads_sweep_is_refused_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sweep.jsonl");
        append(&p, &record("sync", 0, 1, 4, 1.0)).unwrap();
        let e = resume(&p, "copy").unwrap_err().to_string();
        assert!(
            e.contains("points of the rmsnorm workload") && e.contains("(copy here)"),
            "{e}"
        );
        assert_eq!(resume(&p, "rmsnorm").unwrap().done.len(), 1);
        // judged ahead, with a torn last line, and left as it was
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"torn"))
            .unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            can_resume(&p, "copy")
                .unwrap_err()
                .to_string()
                .contains("(copy here)")
        );
        can_resume(&p, "rmsnorm").unwrap();
        can_resume(&d.path().join("none.jsonl"), "copy").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
    }

    #[test]
    fn a_missing_file_is_an_error_to_read_and_a_fresh_start_to_resume() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("none.jsonl");
        let msg = read(&p).unwrap_err().to_string();
        assert!(
            msg.contains("none.jsonl") && msg.contains("os error 2"),
            "{msg}"
        );
        assert_eq!(resume(&p, "rmsnorm").unwrap(), Resumed::default());
        assert!(!p.exists());
    }

    #[test]
    fn workers_read_what_is_measured_without_cutting_a_line_being_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep.jsonl");
        assert!(measured(&path).unwrap().is_empty());
        append(&path, &record("sync", 0, 1, 4, 1.0)).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"key\":\"half a li").unwrap();
        let before = std::fs::metadata(&path).unwrap().len();
        let keys = measured(&path).unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            before,
            "the file was changed"
        );
    }

    #[test]
    fn a_file_of_one_torn_line_is_cut_to_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sweep.jsonl");
        std::fs::write(&p, "{\"ke").unwrap();
        let r = resume(&p, "rmsnorm").unwrap();
        assert!(r.done.is_empty() && r.warnings.len() == 1);
        assert_eq!(std::fs::read(&p).unwrap(), b"");
    }
}
