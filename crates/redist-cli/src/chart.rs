//! `redist chart`: the benchmark table as a PNG bar chart.
//!
//! Reads the JSON lines `redist run --json` prints (several rounds of one
//! case may follow each other; `scripts/bench-redist.sh` collects them with
//! `CHART=FILE`), takes per case the median of each ratio over its rounds,
//! and draws one bar per case and baseline: the execution time divided by
//! the bare `MPI_Alltoallv`'s (blue) and by ScaLAPACK's `pdgemr2d`'s
//! (orange, where measured). Shorter is faster; a dark line marks 1.
//!
//! - [`read_cases`]: the JSON lines grouped into [`CaseRatios`];
//! - [`render`]: the chart as an RGB [`Image`], text in an 8×8 bitmap font
//!   (the title and legend, the grid lines, then one row per case);
//! - [`write_png`] and [`run`]: the file and the subcommand.

use crate::error::CliError;
use clap::Args;
use font8x8::legacy::BASIC_LEGACY;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;

/// Arguments of `redist chart`.
#[derive(Debug, Clone, Args)]
pub struct ChartArgs {
    /// A file of JSON lines of `redist run --json`; may be repeated, the
    /// files are read in turn (default: standard input).
    #[arg(long, value_name = "FILE")]
    pub input: Vec<PathBuf>,
    /// The PNG file to write.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// A title above the bars (default: what the bars are, and the ranks).
    #[arg(long)]
    pub title: Option<String>,
}

/// One benchmark case: its label and the medians of its rounds' ratios.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseRatios {
    /// Shape, type, the two layouts, strategy, column-major storage, and
    /// whether node-direct copies were off.
    pub label: String,
    /// Execution time over the bare all-to-all's, when measured.
    pub over_alltoallv: Option<f64>,
    /// Execution time over `pdgemr2d`'s, when measured.
    pub over_pdgemr2d: Option<f64>,
    /// The ranks the case ran on.
    pub ranks: u64,
}

/// Groups the JSON lines of `redist run --json` by case, in the order cases
/// first appear, with the median of each ratio over a case's rounds.
/// `inputs` are (name, text) pairs, read in turn; blank lines are skipped.
///
/// # Errors
///
/// - [`CliError::BadRecord`] for a line that is not a JSON object with the
///   keys of `redist run --json`;
/// - [`CliError::NoRecords`] when no line holds a record.
pub fn read_cases(inputs: &[(String, String)]) -> Result<Vec<CaseRatios>, CliError> {
    let mut cases = Cases::default();
    let lines = inputs
        .iter()
        .flat_map(|(source, text)| text.lines().enumerate().map(move |(i, l)| (source, i, l)));
    for (source, i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        cases.add(read_round(source, i + 1, line)?);
    }
    if cases.rounds.is_empty() {
        return Err(CliError::NoRecords);
    }
    Ok(cases.medians())
}

/// One line of `redist run --json`: the case it measures and its ratios.
struct Round {
    /// The case's label (see [`CaseRatios::label`]).
    label: String,
    /// The ranks it ran on.
    ranks: u64,
    /// Execution time over the bare all-to-all's, when measured.
    over_alltoallv: Option<f64>,
    /// Execution time over `pdgemr2d`'s, when measured.
    over_pdgemr2d: Option<f64>,
}

/// Reads line `line_no` (1-based) of `source`, `line`, as a [`Round`].
fn read_round(source: &str, line_no: usize, line: &str) -> Result<Round, CliError> {
    let bad = |reason: String| CliError::BadRecord {
        input: source.to_string(),
        line: line_no,
        reason,
    };
    let v: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
    let text_of = |key: &str| -> Result<String, CliError> {
        match &v[key] {
            Value::String(s) => Ok(s.clone()),
            Value::Array(a) => Ok(a
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("x")),
            _ => Err(bad(format!("no key `{key}`"))),
        }
    };
    let ratio = |key: &str| -> Result<Option<f64>, CliError> {
        match &v[key] {
            Value::Null => Ok(None),
            x => x
                .as_f64()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .map(Some)
                .ok_or_else(|| bad(format!("`{key}` is {x}, not a ratio"))),
        }
    };
    let mut label = format!(
        "{} {} {} -> {} {}",
        text_of("shape")?,
        text_of("type")?,
        text_of("from")?,
        text_of("to")?,
        text_of("strategy")?
    );
    if v["storage"] == "column-major" {
        label.push_str(" column-major");
    }
    if v["node_direct"] == Value::Bool(false) {
        label.push_str(" (no node-direct)");
    }
    let ranks = v["ranks"].as_u64().unwrap_or(0);
    let over_alltoallv = ratio("exec_over_alltoallv")?;
    // pdgemr2d's ratio is the other way round: its time over ours.
    let over_pdgemr2d =
        ratio("pdgemr2d_over_exec")?.map(|r| if r > 0.0 { 1.0 / r } else { f64::INFINITY });
    Ok(Round {
        label,
        ranks,
        over_alltoallv,
        over_pdgemr2d,
    })
}

/// The rounds read so far, grouped by case in the order cases first appear.
#[derive(Default)]
struct Cases {
    /// Per case, its label and ranks: what tells cases apart.
    keys: Vec<String>,
    /// Per case, the case and its rounds' ratios to each baseline.
    rounds: Vec<(CaseRatios, Vec<f64>, Vec<f64>)>,
}

impl Cases {
    /// Adds `round` to its case, which it opens when it is the first.
    fn add(&mut self, round: Round) {
        let key = format!("{} {}", round.label, round.ranks);
        let at = match self.keys.iter().position(|k| *k == key) {
            Some(at) => at,
            None => {
                self.keys.push(key);
                self.rounds.push((
                    CaseRatios {
                        label: round.label,
                        over_alltoallv: None,
                        over_pdgemr2d: None,
                        ranks: round.ranks,
                    },
                    vec![],
                    vec![],
                ));
                self.rounds.len() - 1
            }
        };
        self.rounds[at].1.extend(round.over_alltoallv);
        self.rounds[at].2.extend(round.over_pdgemr2d);
    }

    /// Every case with the median of each of its ratios.
    fn medians(self) -> Vec<CaseRatios> {
        self.rounds
            .into_iter()
            .map(|(mut case, a2a, pdg)| {
                case.over_alltoallv = median(a2a);
                case.over_pdgemr2d = median(pdg);
                case
            })
            .collect()
    }
}

/// The median (mean of the middle two for an even count); `None` when empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// An RGB image, 3 bytes per pixel, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height * 3` bytes.
    pub rgb: Vec<u8>,
}

/// An RGB colour.
type Rgb = [u8; 3];

const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const GRID: Rgb = [225, 225, 225];
const ONE: Rgb = [90, 90, 90];
/// The bars of the ratio to the bare all-to-all.
pub const ALLTOALLV: Rgb = [59, 110, 196];
/// The bars of the ratio to `pdgemr2d`.
pub const PDGEMR2D: Rgb = [230, 140, 40];

/// Glyph size of the bitmap font, in pixels.
const GLYPH: usize = 8;
const MARGIN: usize = 12;
/// Width of the bar area: [`scale_max`] maps to its right end.
pub const BAR_AREA: usize = 480;
const BAR: usize = 9;
const ROW_GAP: usize = 8;
/// Room right of the bars for the printed value.
const VALUE_ROOM: usize = 7 * GLYPH;

impl Image {
    fn new(width: usize, height: usize) -> Image {
        let mut rgb = Vec::with_capacity(width * height * 3);
        for _ in 0..width * height {
            rgb.extend_from_slice(&WHITE);
        }
        Image { width, height, rgb }
    }

    /// The colour of pixel (`x`, `y`).
    #[cfg(test)]
    fn pixel(&self, x: usize, y: usize) -> Rgb {
        let i = 3 * (y * self.width + x);
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    fn fill(&mut self, x: usize, y: usize, w: usize, h: usize, colour: Rgb) {
        for row in y..(y + h).min(self.height) {
            let from = 3 * (row * self.width + x.min(self.width));
            let to = 3 * (row * self.width + (x + w).min(self.width));
            for px in self.rgb[from..to].chunks_exact_mut(3) {
                px.copy_from_slice(&colour);
            }
        }
    }

    /// Writes `text` with its top-left corner at (`x`, `y`); characters
    /// outside printable ASCII are drawn as `?`.
    fn text(&mut self, x: usize, y: usize, text: &str, colour: Rgb) {
        for (k, c) in text.chars().enumerate() {
            let code = if c.is_ascii_graphic() || c == ' ' {
                c as usize
            } else {
                '?' as usize
            };
            for (row, bits) in BASIC_LEGACY[code].iter().enumerate() {
                for col in 0..GLYPH {
                    // Bit 0 is the leftmost pixel of a row.
                    if bits & (1 << col) != 0 {
                        let (px, py) = (x + k * GLYPH + col, y + row);
                        if px < self.width && py < self.height {
                            let i = 3 * (py * self.width + px);
                            self.rgb[i..i + 3].copy_from_slice(&colour);
                        }
                    }
                }
            }
        }
    }
}

/// The ratio at the right end of the bar area: the largest ratio rounded up
/// to a multiple of 0.5, at least 1.5 (so the line at 1 is always inside),
/// at most 5 (longer bars are cut and marked `>`).
pub fn scale_max(cases: &[CaseRatios]) -> f64 {
    let largest = cases
        .iter()
        .flat_map(|c| c.over_alltoallv.into_iter().chain(c.over_pdgemr2d))
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max);
    ((largest * 2.0).ceil() / 2.0).clamp(1.5, 5.0)
}

/// Pixel length of a bar for `ratio` on a scale ending at `max`.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a ratio clamped to 0..=max, times BAR_AREA"
)]
pub fn bar_length(ratio: f64, max: f64) -> usize {
    ((ratio.clamp(0.0, max) / max) * BAR_AREA as f64).round() as usize
}

/// Draws the chart: a title and legend, then per case its label and one
/// bar per measured baseline, with grid lines every 0.5 and a dark line at 1.
pub fn render(cases: &[CaseRatios], title: &str) -> Image {
    let frame = Frame::new(cases);
    let width =
        (frame.bars_x + BAR_AREA + VALUE_ROOM + MARGIN).max(MARGIN * 2 + title.len() * GLYPH);
    let height = frame.bottom + 2 * GLYPH + MARGIN;
    let mut img = Image::new(width, height);
    draw_title_and_legend(&mut img, title, frame.with_pdgemr2d);
    draw_grid_lines(&mut img, &frame);
    for (k, case) in cases.iter().enumerate() {
        draw_case(&mut img, &frame, frame.top + k * frame.row, case);
    }
    img
}

/// Where a chart's labels and bars go, in pixels, and the scale of its bars.
struct Frame {
    /// Left end of the bars, right of the longest label.
    bars_x: usize,
    /// Whether any case has a ratio to `pdgemr2d` (then every case has
    /// room for two bars).
    with_pdgemr2d: bool,
    /// Bars per case: 2 with `pdgemr2d`, else 1.
    bars_per_case: usize,
    /// Height of one case's row.
    row: usize,
    /// Top of the first case's row, below the title and legend.
    top: usize,
    /// Bottom of the last case's row.
    bottom: usize,
    /// The ratio at the right end of the bar area ([`scale_max`]).
    max: f64,
}

impl Frame {
    fn new(cases: &[CaseRatios]) -> Frame {
        let label_chars = cases
            .iter()
            .map(|c| c.label.chars().count())
            .max()
            .unwrap_or(0);
        let with_pdgemr2d = cases.iter().any(|c| c.over_pdgemr2d.is_some());
        let bars_per_case = if with_pdgemr2d { 2 } else { 1 };
        let row = bars_per_case * (BAR + 2) + ROW_GAP;
        let top = MARGIN + 3 * (GLYPH + 6);
        Frame {
            bars_x: MARGIN + (label_chars + 2) * GLYPH,
            with_pdgemr2d,
            bars_per_case,
            row,
            top,
            bottom: top + cases.len() * row,
            max: scale_max(cases),
        }
    }
}

/// The title, and below it the legend: one colour per baseline drawn.
fn draw_title_and_legend(img: &mut Image, title: &str, with_pdgemr2d: bool) {
    img.text(MARGIN, MARGIN, title, BLACK);
    let legend_y = MARGIN + GLYPH + 8;
    img.fill(MARGIN, legend_y, GLYPH, GLYPH, ALLTOALLV);
    img.text(
        MARGIN + 2 * GLYPH,
        legend_y,
        "exec / bare MPI_Alltoallv",
        BLACK,
    );
    if with_pdgemr2d {
        let x = MARGIN + 30 * GLYPH;
        img.fill(x, legend_y, GLYPH, GLYPH, PDGEMR2D);
        img.text(x + 2 * GLYPH, legend_y, "exec / ScaLAPACK pdgemr2d", BLACK);
    }
}

/// Grid lines every 0.5 with their values below, the line at 1 darker.
fn draw_grid_lines(img: &mut Image, frame: &Frame) {
    let Frame {
        bars_x,
        top,
        bottom,
        max,
        ..
    } = *frame;
    let mut tick = 0.0;
    while tick <= max + 1e-9 {
        let x = bars_x + bar_length(tick, max);
        let colour = if (tick - 1.0).abs() < 1e-9 { ONE } else { GRID };
        img.fill(
            x.min(bars_x + BAR_AREA - 1),
            top - 4,
            1,
            bottom - top + 4,
            colour,
        );
        let label = format!("{tick:.1}");
        img.text(
            x.saturating_sub(label.len() * GLYPH / 2),
            bottom + 4,
            &label,
            BLACK,
        );
        tick += 0.5;
    }
}

/// One case's row, from `y` down: its label, and one bar per measured
/// ratio with its value at the bar's end (`>` before a ratio past the scale).
fn draw_case(img: &mut Image, frame: &Frame, y: usize, case: &CaseRatios) {
    let Frame {
        bars_x,
        bars_per_case,
        max,
        ..
    } = *frame;
    img.text(
        MARGIN,
        y + (bars_per_case * (BAR + 2) - GLYPH) / 2,
        &case.label,
        BLACK,
    );
    let bars = [
        (case.over_alltoallv, ALLTOALLV),
        (case.over_pdgemr2d, PDGEMR2D),
    ];
    for (j, (ratio, colour)) in bars.into_iter().take(bars_per_case).enumerate() {
        let by = y + j * (BAR + 2);
        let Some(ratio) = ratio else {
            continue;
        };
        let len = bar_length(ratio, max);
        img.fill(bars_x, by, len, BAR, colour);
        let value = if ratio > max {
            format!(">{ratio:.2}")
        } else {
            format!("{ratio:.2}")
        };
        img.text(bars_x + len + 4, by + (BAR - GLYPH) / 2, &value, BLACK);
    }
}

/// Writes `img` as an 8-bit RGB PNG.
///
/// # Errors
///
/// [`CliError::Io`] when writing fails or the image is too large for PNG.
pub fn write_png(img: &Image, out: impl Write) -> Result<(), CliError> {
    let too_big = |_| std::io::Error::other("image too large for PNG");
    let (w, h) = (
        u32::try_from(img.width).map_err(too_big)?,
        u32::try_from(img.height).map_err(too_big)?,
    );
    let mut enc = png::Encoder::new(out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&img.rgb)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)?;
    Ok(())
}

/// Runs `redist chart`: reads the records, draws them and writes the PNG.
///
/// # Errors
///
/// [`CliError::File`] when the input cannot be read or the output written,
/// and the errors of [`read_cases`].
pub fn run(args: &ChartArgs) -> Result<(), CliError> {
    let file_error = |path: &std::path::Path, e: std::io::Error| CliError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let mut inputs = vec![];
    if args.input.is_empty() {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| file_error(std::path::Path::new("standard input"), e))?;
        inputs.push(("standard input".to_string(), text));
    }
    for path in &args.input {
        let text = std::fs::read_to_string(path).map_err(|e| file_error(path, e))?;
        inputs.push((path.display().to_string(), text));
    }
    let cases = read_cases(&inputs)?;
    let title = args.title.clone().unwrap_or_else(|| {
        let mut ranks: Vec<u64> = cases.iter().map(|c| c.ranks).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let ranks: Vec<String> = ranks.iter().map(ToString::to_string).collect();
        format!(
            "redistribution time / baseline time, same run (shorter is faster); {} ranks",
            ranks.join(", ")
        )
    });
    let img = render(&cases, &title);
    let file = std::fs::File::create(&args.output).map_err(|e| file_error(&args.output, e))?;
    write_png(&img, std::io::BufWriter::new(file)).map_err(|e| match e {
        CliError::Io { message, .. } => CliError::File {
            path: args.output.display().to_string(),
            message,
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Vec<(String, String)> {
        vec![("runs.jsonl".to_string(), text.to_string())]
    }

    fn record(from: &str, a2a: f64, pdg: Option<f64>) -> String {
        let mut v = serde_json::json!({
            "shape": [64, 64], "type": "f64", "from": from, "to": "block,*@2x1",
            "strategy": "async", "node_direct": true, "ranks": 2,
            "exec_over_alltoallv": a2a,
        });
        if let Some(p) = pdg {
            v["pdgemr2d_over_exec"] = serde_json::json!(p);
        }
        v.to_string()
    }

    #[test]
    fn rounds_of_one_case_give_their_median() {
        let text = [
            record("*,block@1x2", 1.0, None),
            record("cyclic,*@2x1", 3.0, None),
            String::new(),
            record("*,block@1x2", 1.4, None),
            record("*,block@1x2", 1.2, None),
        ]
        .join("\n");
        let cases = read_cases(&one(&text)).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].label, "64x64 f64 *,block@1x2 -> block,*@2x1 async");
        assert_eq!(cases[0].over_alltoallv, Some(1.2));
        assert_eq!(cases[1].over_alltoallv, Some(3.0));
        assert_eq!(cases[0].over_pdgemr2d, None);
        assert_eq!(cases[0].ranks, 2);
    }

    #[test]
    fn pdgemr2d_ratio_is_turned_into_exec_over_pdgemr2d() {
        let cases = read_cases(&one(&record("*,block@1x2", 1.1, Some(5.0)))).unwrap();
        assert_eq!(cases[0].over_pdgemr2d, Some(0.2));
    }

    #[test]
    fn bad_lines_are_named() {
        let text = format!("{}\nnot json", record("*,block@1x2", 1.0, None));
        let inputs = [
            one(&record("*,block@1x2", 1.0, None)),
            vec![("b".to_string(), text)],
        ]
        .concat();
        match read_cases(&inputs) {
            Err(e @ CliError::BadRecord { line: 2, .. }) => {
                assert!(e.to_string().starts_with("b, line 2: "), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_cases(&one("{\"shape\": [4]}")),
            Err(CliError::BadRecord { line: 1, .. })
        ));
        assert!(matches!(read_cases(&one("\n\n")), Err(CliError::NoRecords)));
        assert!(matches!(read_cases(&[]), Err(CliError::NoRecords)));
        let negative = record("*,block@1x2", -1.0, None);
        assert!(matches!(
            read_cases(&one(&negative)),
            Err(CliError::BadRecord { .. })
        ));
    }

    #[test]
    fn scale_holds_one_and_caps_long_bars() {
        let case = |r| CaseRatios {
            label: "x".into(),
            over_alltoallv: Some(r),
            over_pdgemr2d: None,
            ranks: 2,
        };
        assert_eq!(scale_max(&[case(0.4)]), 1.5);
        assert_eq!(scale_max(&[case(1.7)]), 2.0);
        assert_eq!(scale_max(&[case(40.0)]), 5.0);
        assert_eq!(bar_length(1.0, 2.0), BAR_AREA / 2);
        assert_eq!(bar_length(9.0, 2.0), BAR_AREA);
    }

    /// The bars have the lengths of their ratios: count the bar colour's
    /// pixels along each bar's middle row.
    #[test]
    fn bars_are_as_long_as_their_ratios() {
        let cases = vec![
            CaseRatios {
                label: "first".into(),
                over_alltoallv: Some(1.0),
                over_pdgemr2d: Some(0.25),
                ranks: 2,
            },
            CaseRatios {
                label: "second case".into(),
                over_alltoallv: Some(2.0),
                over_pdgemr2d: None,
                ranks: 2,
            },
        ];
        let img = render(&cases, "title");
        assert_eq!(img.rgb.len(), img.width * img.height * 3);
        let count = |colour: Rgb| -> Vec<usize> {
            (0..img.height)
                .map(|y| {
                    (0..img.width)
                        .filter(|&x| img.pixel(x, y) == colour)
                        .count()
                })
                .filter(|&n| n > GLYPH)
                .collect()
        };
        let max = scale_max(&cases);
        assert_eq!(max, 2.0);
        // Every row of a bar has the bar's length (grid lines are drawn first).
        let blue = count(ALLTOALLV);
        assert!(blue.contains(&bar_length(1.0, max)), "{blue:?}");
        assert!(blue.contains(&bar_length(2.0, max)), "{blue:?}");
        let orange = count(PDGEMR2D);
        assert!(
            orange.iter().all(|&n| n == bar_length(0.25, max)),
            "{orange:?}"
        );
        assert_eq!(orange.len(), BAR);
    }

    #[test]
    fn the_png_decodes_to_the_image() {
        let cases = read_cases(&one(&record("*,block@1x2", 1.3, Some(4.0)))).unwrap();
        let img = render(&cases, "t");
        let mut bytes = vec![];
        write_png(&img, &mut bytes).unwrap();
        let mut reader = png::Decoder::new(&bytes[..]).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(
            (info.width as usize, info.height as usize),
            (img.width, img.height)
        );
        assert_eq!(&buf[..info.buffer_size()], &img.rgb[..]);
    }
}
