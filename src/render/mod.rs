//! Every output format, drawn from the results alone (`crate::results`), whichever workload: the
//! terminal tables, markdown, CSV and JSON documents, report.html and compare.html, the SVG plots
//! and the Chrome trace.

pub mod chart;
pub mod clock_notes;
pub mod compare;
pub mod formats;
pub mod html;
pub mod plot;
pub mod sweep;
pub mod table;
pub mod timeline;
