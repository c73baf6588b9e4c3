//! The machine- and pull-request-friendly outputs of `run`, `check` and `sweep` (markdown, CSV,
//! JSON), and the markdown and CSV pieces every renderer shares (`compare` too). Pure: each
//! returns the text whole.

pub mod check;
pub mod run;
pub mod sweep;

/// One GitHub table row: pipes escaped, line breaks as `<br>` (a raw one would end the table).
pub fn md_row<S: AsRef<str>>(cells: impl IntoIterator<Item = S>) -> String {
    let cells: Vec<String> = cells
        .into_iter()
        .map(|c| {
            c.as_ref()
                .trim_end()
                .replace('|', "\\|")
                .replace("\r\n", "<br>")
                .replace('\n', "<br>")
        })
        .collect();
    format!("| {} |\n", cells.join(" | "))
}

/// A GitHub table: the header, the alignment row (the columns in `right` aligned right), the rows.
pub fn md_table<R: IntoIterator<Item = S>, S: AsRef<str>>(
    header: &[&str],
    right: &[usize],
    rows: impl IntoIterator<Item = R>,
) -> String {
    let mut out = md_row(header);
    out += &md_row((0..header.len()).map(|i| if right.contains(&i) { "---:" } else { "---" }));
    for r in rows {
        out += &md_row(r);
    }
    out
}

/// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled
/// (attestation labels read "claimed X, emitted Y").
pub fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// A CSV document: the header row, then one line per row.
pub fn csv_doc<R: IntoIterator<Item = String>>(
    header: &[&str],
    rows: impl IntoIterator<Item = R>,
) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for r in rows {
        out += &r
            .into_iter()
            .map(|f| csv_field(&f))
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
    }
    out
}

/// A number at full precision, or an empty field.
pub fn opt<T: ToString>(x: Option<T>) -> String {
    x.map_or(String::new(), |x| x.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cells_cannot_break_the_table() {
        let t = md_table(&["a", "b"], &[1], [["x|y", "two\nlines"]]);
        assert_eq!(t, "| a | b |\n| --- | ---: |\n| x\\|y | two<br>lines |\n");
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let d = csv_doc(
            &["a", "b"],
            [vec!["plain".to_string(), "say \"hi\", twice\n".into()]],
        );
        assert_eq!(d, "a,b\nplain,\"say \"\"hi\"\", twice\n\"\n");
        assert_eq!(opt(Some(1.5)), "1.5");
        assert_eq!(opt(None::<f64>), "");
    }
}
