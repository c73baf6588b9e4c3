//! The lab's terminal UI: Reset, Step, rate controls, a prediction asked for before stepping and
//! compared with the outcome, a plot of the backlog beside the bounded S-slot pipeline, and the
//! disclaimer always on screen. Fits 80x24.

use super::{DISCLAIMER, Queue, num};
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
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

pub fn draw(f: &mut Frame, app: &App) {
    let [title, disclaimer, body, prompt] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(4),
        Constraint::Min(8),
        Constraint::Length(3),
    ])
    .areas(f.area());
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
            .name("S-slot")
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
    let text = match &app.input {
        Some(buf) => format!("prediction> {buf}_   (Enter, Esc)"),
        None => app.message.clone(),
    };
    f.render_widget(
        Paragraph::new(text).block(Block::default().borders(Borders::ALL)),
        prompt,
    );
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
                app.key(k.code);
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
        let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| draw(f, app)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..24)
            .map(|y| {
                (0..80)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
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
