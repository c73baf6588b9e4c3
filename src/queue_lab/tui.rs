//! The lab's terminal UI: Reset, Step, rate controls, a prediction asked for before stepping and
//! compared with the outcome, a plot of the backlog beside the bounded pipeline of its slots, and
//! the disclaimer always on screen, at any size (the rest gives way to it). Fits 80x24; Ctrl-C or
//! q quits.

use super::{DISCLAIMER, Queue, num};
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph, Wrap};

pub struct App {
    pub q: Queue,
    /// The prediction being typed, when the prompt is open.
    pub input: Option<String>,
    /// A step waits for the prediction prompt to be answered.
    step_after_input: bool,
    pub message: String,
    pub quit: bool,
}

const RATE_STEP: f64 = 0.5;

impl App {
    pub fn new(q: Queue) -> App {
        App {
            q,
            input: None,
            step_after_input: false,
            message: "r reset  space step  a/A arrival  d/D service  p predict  q quit".into(),
            quit: false,
        }
    }

    fn step(&mut self) {
        self.q.step();
        self.message = match self.q.verdict.take() {
            Some((p, a)) => format!(
                "after one second: predicted {}, backlog {} ({})",
                num(p),
                num(a),
                if (p - a).abs() < 1e-9 { "right" } else { "off" }
            ),
            None => format!("t = {} s", num(self.q.t)),
        };
    }

    /// A key pressed with Ctrl held: Ctrl-C quits, wherever the lab is (the terminal is in raw
    /// mode, so no signal comes).
    pub fn ctrl_key(&mut self, code: KeyCode) {
        if code == KeyCode::Char('c') {
            self.quit = true;
        }
    }

    pub fn key(&mut self, code: KeyCode) {
        if let Some(buf) = self.input.as_mut() {
            match code {
                KeyCode::Char(c) if c.is_ascii_digit() || c == '.' || c == '-' => buf.push(c),
                KeyCode::Backspace => {
                    buf.pop();
                }
                KeyCode::Esc => {
                    self.input = None;
                    self.step_after_input = false;
                    self.message = "prediction cancelled".into();
                }
                KeyCode::Enter => {
                    let text = buf.clone();
                    match text
                        .parse::<f64>()
                        .map_err(|_| format!("'{text}' is not a number"))
                        .and_then(|v| self.q.predict(v, 1.0).map_err(|e| e.to_string()))
                    {
                        Ok(()) => {
                            self.input = None;
                            self.message =
                                format!("predicted {text} at t = {} s", num(self.q.t + 1.0));
                            if std::mem::take(&mut self.step_after_input) {
                                self.step();
                            }
                        }
                        Err(e) => self.message = e,
                    }
                }
                _ => {}
            }
            return;
        }
        let rate = |v: f64, d: f64| (v + d).max(0.0);
        match code {
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Char('r') => {
                self.q.reset();
                self.message = "reset: backlog 4 at t = 0".into();
            }
            KeyCode::Char(' ') | KeyCode::Char('s') => {
                // every second of stepping starts with a prediction
                if self.q.prediction.is_none() {
                    self.input = Some(String::new());
                    self.step_after_input = true;
                    self.message = "predict the backlog one second from now, then Enter".into();
                } else {
                    self.step();
                }
            }
            KeyCode::Char('p') => {
                self.input = Some(String::new());
                self.message = "predict the backlog one second from now, then Enter".into();
            }
            KeyCode::Char('a') => self.q.arrival = rate(self.q.arrival, -RATE_STEP),
            KeyCode::Char('A') => self.q.arrival = rate(self.q.arrival, RATE_STEP),
            KeyCode::Char('d') => self.q.service = rate(self.q.service, -RATE_STEP),
            KeyCode::Char('D') => self.q.service = rate(self.q.service, RATE_STEP),
            _ => {}
        }
    }
}

/// What stands for the disclaimer where the terminal cannot hold it.
const SHORT_DISCLAIMER: &str =
    "ANALOGY ONLY: cannot validate a CUDA pipeline (a larger terminal shows more)";

/// Lines `text` takes wrapped at word boundaries to `width` columns.
fn wrapped_lines(text: &str, width: u16) -> u16 {
    let width = usize::from(width.max(1));
    let (mut lines, mut col) = (1u16, 0usize);
    for word in text.split_whitespace() {
        let w = word.chars().count();
        let need = if col == 0 { w } else { col + 1 + w };
        if need <= width || col == 0 {
            col = need.min(width.max(w));
        } else {
            lines += 1;
            col = w;
        }
    }
    lines
}

pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    // the disclaimer comes first at any size: the rest gives way to it
    let disclaimer_h = wrapped_lines(DISCLAIMER, area.width.saturating_sub(2)) + 2;
    // title, disclaimer, a plot of at least 5 lines, the prompt
    if area.height < 1 + disclaimer_h + 5 + 4 {
        // too small even for the whole sentence: its label and its point
        let text = match wrapped_lines(DISCLAIMER, area.width) <= area.height {
            true => DISCLAIMER,
            false => SHORT_DISCLAIMER,
        };
        let bare = wrapped_lines(text, area.width);
        let [top, rest] =
            Layout::vertical([Constraint::Length(bare), Constraint::Fill(1)]).areas(area);
        f.render_widget(
            Paragraph::new(text)
                .style(
                    Style::default()
                        .fg(Color::Yellow)
                        .add_modifier(Modifier::BOLD),
                )
                .wrap(Wrap { trim: true }),
            top,
        );
        f.render_widget(
            Paragraph::new(prompt_lines(app)).wrap(Wrap { trim: true }),
            rest,
        );
        return;
    }
    let [title, disclaimer, body, prompt] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(disclaimer_h),
        Constraint::Fill(1),
        Constraint::Length(4),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                "tilepipe queue lab",
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(" - a fluid queue standing in for outstanding tiles"),
        ])),
        title,
    );
    f.render_widget(
        Paragraph::new(DISCLAIMER)
            .style(
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
            .wrap(Wrap { trim: true })
            .block(Block::default().borders(Borders::ALL)),
        disclaimer,
    );
    let [left, right] =
        Layout::horizontal([Constraint::Length(30), Constraint::Min(20)]).areas(body);
    let q = &app.q;
    let state = vec![
        Line::from(format!("t        {} s", num(q.t))),
        Line::from(format!("arrival  {} /s  (a A)", num(q.arrival))),
        Line::from(format!("service  {} /s  (d D)", num(q.service))),
        Line::from(Span::styled(
            format!("backlog  {}", num(q.backlog)),
            Style::default().add_modifier(Modifier::BOLD),
        )),
        Line::from(format!("{}-slot pipeline", num(q.slots))),
        Line::from(format!(" in flight {}", num(q.bounded))),
        Line::from(format!(" producer stalled {}", num(q.stalled))),
        Line::from(match &q.prediction {
            Some(p) => format!("predicted {} at {} s", num(p.backlog), num(p.at)),
            None => "no prediction pending".into(),
        }),
    ];
    f.render_widget(
        Paragraph::new(state).block(Block::default().borders(Borders::ALL).title("state")),
        left,
    );
    let fluid: Vec<(f64, f64)> = q.history.iter().map(|h| (h.0, h.1)).collect();
    let bounded: Vec<(f64, f64)> = q.history.iter().map(|h| (h.0, h.2)).collect();
    // the history keeps the latest points only: the axis starts at the oldest one kept
    let tmin = q.history.front().map_or(0.0, |h| h.0);
    let tmax = q.t.max(tmin + 2.0);
    let bmax = q
        .history
        .iter()
        .map(|h| h.1.max(h.2))
        .fold(q.slots, f64::max)
        .max(1.0)
        * 1.1;
    let chart = Chart::new(vec![
        Dataset::default()
            .name("backlog")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Cyan))
            .data(&fluid),
        Dataset::default()
            .name(format!("{}-slot pipeline", num(q.slots)))
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Magenta))
            .data(&bounded),
    ])
    .block(
        Block::default()
            .borders(Borders::ALL)
            .title("backlog over time"),
    )
    .x_axis(Axis::default().bounds([tmin, tmax]).labels(vec![
        Span::raw(num(tmin)),
        Span::raw(format!("{} s", num(tmax))),
    ]))
    .y_axis(
        Axis::default()
            .bounds([0.0, bmax])
            .labels(vec![Span::raw("0"), Span::raw(num(bmax))]),
    );
    f.render_widget(chart, right);
    f.render_widget(
        Paragraph::new(prompt_lines(app)).block(Block::default().borders(Borders::ALL)),
        prompt,
    );
}

/// The message, and while a prediction is typed the answer below its question.
fn prompt_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(app.message.clone())];
    if let Some(buf) = &app.input {
        lines.push(Line::from(format!("prediction> {buf}_   (Enter, Esc)")));
    }
    lines
}

/// Runs the interactive lab until q.
pub fn run(q: Queue) -> std::io::Result<()> {
    let mut app = App::new(q);
    ratatui::run(|terminal| {
        while !app.quit {
            terminal.draw(|f| draw(f, &app))?;
            if let Event::Key(k) = event::read()?
                && k.kind == KeyEventKind::Press
            {
                match k.modifiers.contains(KeyModifiers::CONTROL) {
                    true => app.ctrl_key(k.code),
                    false => app.key(k.code),
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen(app: &App) -> String {
        screen_of(app, 80, 24)
    }

    fn screen_of(app: &App, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, app)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    }

    /// The disclaimer's words, however it is wrapped.
    fn shows_disclaimer(s: &str) -> bool {
        let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let words: Vec<&str> = DISCLAIMER.split_whitespace().collect();
        let on = |w: &str| flat.contains(w.trim_matches(|c: char| !c.is_alphanumeric()));
        words.iter().all(|w| on(w))
    }

    #[test]
    fn the_disclaimer_stays_at_any_size_and_the_question_above_the_answer() {
        let mut app = App::new(Queue::new(0.5, 4.0).unwrap());
        for (w, h) in [(80, 24), (40, 12), (30, 8), (120, 40), (20, 7)] {
            let s = screen_of(&app, w, h);
            assert!(shows_disclaimer(&s), "{w}x{h}:\n{s}");
        }
        for (w, h) in [(20, 6), (16, 5)] {
            let s = screen_of(&app, w, h);
            let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                flat.contains("ANALOGY ONLY: cannot validate a CUDA pipeline"),
                "{w}x{h}:\n{s}"
            );
        }
        keys(&mut app, " 4");
        let s = screen(&app);
        assert!(s.contains("predict the backlog one second from now"), "{s}");
        assert!(s.contains("prediction> 4_"), "{s}");
        assert!(
            s.contains("4-slot pipeline") && !s.contains("S-slot"),
            "{s}"
        );
        app.ctrl_key(KeyCode::Char('c'));
        assert!(app.quit);
        assert_eq!(wrapped_lines("aa bb cc", 5), 2);
        assert_eq!(wrapped_lines("aaaaaaa b", 3), 2);
    }

    fn keys(app: &mut App, s: &str) {
        for c in s.chars() {
            app.key(match c {
                '\n' => KeyCode::Enter,
                c => KeyCode::Char(c),
            });
        }
    }

    #[test]
    fn exercise_in_the_tui_fits_80x24_with_the_disclaimer() {
        let mut app = App::new(Queue::new(0.5, 4.0).unwrap());
        keys(&mut app, "r");
        keys(&mut app, "AAAAAA"); // arrival 3
        keys(&mut app, "DDDD"); // service 2
        keys(&mut app, " 5\n"); // step asks for a prediction first, then steps
        assert_eq!(app.q.t, 0.5);
        keys(&mut app, " ");
        assert_eq!(app.q.backlog, 5.0);
        let s = screen(&app);
        assert!(s.contains("ANALOGY ONLY"), "{s}");
        assert!(s.contains("cannot validate a CUDA pipeline"), "{s}");
        assert!(s.contains("backlog  5"), "{s}");
        assert!(s.contains("predicted 5, backlog 5 (right)"), "{s}");
        // the second exercise after a fresh reset
        keys(&mut app, "rdddd"); // service back to 0
        keys(&mut app, "DDDDDDDD"); // service 4
        keys(&mut app, " 3\n ");
        let s = screen(&app);
        assert!(s.contains("backlog  3"), "{s}");
        assert!(s.contains("ANALOGY ONLY"));
    }
}
