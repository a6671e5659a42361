//! The heat-map of a field as RGB pixels, with a colour bar.

use ndarray::Array2;

/// A perceptually ordered colour map (dark blue → teal → yellow), `t` in [0, 1].
fn colour(t: f64) -> [u8; 3] {
    const STOPS: [[f64; 3]; 5] = [
        [0.267, 0.005, 0.329],
        [0.231, 0.322, 0.545],
        [0.129, 0.569, 0.549],
        [0.369, 0.788, 0.384],
        [0.993, 0.906, 0.144],
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "t is clamped to 0..=STOPS.len() - 1"
    )]
    let k = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - k as f64;
    let mut out = [0u8; 3];
    for c in 0..3 {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "a colour in 0..=1 times 255"
        )]
        let v = ((STOPS[k][c] * (1.0 - f) + STOPS[k + 1][c] * f) * 255.0).round() as u8;
        out[c] = v;
    }
    out
}

/// The heat-map of `field` as an 8-bit RGB image, `(width, height, pixels)`
/// with `pixels` row by row from the top, three bytes per pixel: x to the
/// right, y upwards, each element a square of `512 / max(nx, ny)` pixels (at
/// least one), and a colour bar on the right running from the field's minimum
/// (bottom) to its maximum (top), with tick marks at quarters.
/// `examples/adi.rs` encodes it as a PNG.
///
/// ```
/// let field = ndarray::Array2::from_shape_fn((4, 2), |(i, j)| (i + j) as f64);
/// let (width, height, pixels) = apps::adi::heat_map_rgb(&field);
/// assert_eq!((width, height), (4 * 128 + 16 + 24 + 8, 2 * 128));
/// assert_eq!(pixels.len(), width * height * 3);
/// ```
pub fn heat_map_rgb(field: &Array2<f64>) -> (usize, usize, Vec<u8>) {
    let (nx, ny) = (field.nrows(), field.ncols());
    let scale = (512 / nx.max(ny).max(1)).max(1);
    let (w_map, h_map) = (nx * scale, ny * scale);
    let (gap, bar, ticks) = (16, 24, 8);
    let width = w_map + gap + bar + ticks;
    let height = h_map;
    let lo = field.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = field.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut img = vec![255u8; width * height * 3];
    let mut put = |x: usize, y: usize, c: [u8; 3]| {
        let o = (y * width + x) * 3;
        img[o..o + 3].copy_from_slice(&c);
    };
    for py in 0..h_map {
        let j = ny - 1 - py / scale;
        for px in 0..w_map {
            let i = px / scale;
            put(px, py, colour((field[[i, j]] - lo) / span));
        }
    }
    for py in 0..height {
        let c = colour(1.0 - py as f64 / (height.max(2) - 1) as f64);
        for px in w_map + gap..w_map + gap + bar {
            put(px, py, c);
        }
    }
    for q in 0..=4 {
        let py = ((height - 1) * q) / 4;
        for px in w_map + gap + bar..width {
            put(px, py, [0, 0, 0]);
        }
    }
    (width, height, img)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_map_layout_and_colour_bar() {
        // Field 3 x 2: scale 512 / 3 = 170, so the map is 510 x 340 pixels.
        let field = Array2::from_shape_fn((3, 2), |(i, j)| (i * 2 + j) as f64);
        let (width, height, img) = heat_map_rgb(&field);
        assert_eq!((width, height), (510 + 16 + 24 + 8, 340));
        assert_eq!(img.len(), width * height * 3);
        let pixel = |x: usize, y: usize| {
            let o = (y * width + x) * 3;
            [img[o], img[o + 1], img[o + 2]]
        };
        // x to the right, y upwards: the minimum (0, 0) is bottom left, the
        // maximum (2, 1) top right.
        assert_eq!(pixel(0, height - 1), colour(0.0));
        assert_eq!(pixel(509, 0), colour(1.0));
        // The gap is white; the bar runs from the maximum (top) to the minimum.
        assert_eq!(pixel(510 + 8, 100), [255, 255, 255]);
        assert_eq!(pixel(510 + 16, 0), colour(1.0));
        assert_eq!(pixel(510 + 16 + 23, height - 1), colour(0.0));
        // Ticks at quarters, white between them.
        for q in 0..=4 {
            assert_eq!(pixel(width - 1, (height - 1) * q / 4), [0, 0, 0]);
        }
        assert_eq!(pixel(width - 1, 1), [255, 255, 255]);
    }

    #[test]
    fn heat_map_of_a_constant_field() {
        let (width, height, img) = heat_map_rgb(&Array2::from_elem((512, 512), 1.5));
        assert_eq!((width, height), (512 + 48, 512));
        assert_eq!(&img[..3], &colour(0.0));
    }
}
