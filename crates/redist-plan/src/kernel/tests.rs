use super::*;

/// Every (read, write) offset pair of a line, element by element.
fn naive(m: &LineCopy) -> Vec<(usize, usize)> {
    let mut v = vec![];
    for i in 0..m.count {
        for j in 0..m.len {
            v.push((
                m.from + i * m.from_step + j * m.from_stride,
                m.to + i * m.to_step + j * m.to_stride,
            ));
        }
    }
    v
}

#[test]
fn every_shape_of_line_matches_the_naive_copy() {
    let src: Vec<u32> = (0..4000).collect();
    for len in 0..12 {
        for count in [0, 1, 2, 7] {
            for (from_step, to_step) in [
                (len, len),
                (len + 3, len),
                (len, len + 5),
                (2 * len + 1, 3 * len + 2),
                (2 * len, len),
                (3 * len, len),
                (len, 2 * len),
                (len, 4 * len),
            ] {
                for (from_stride, to_stride) in [(1, 1), (1, 3), (2, 1)] {
                    let m = LineCopy {
                        from: 5,
                        from_step: from_step * from_stride,
                        from_stride,
                        to: 2,
                        to_step: to_step * to_stride,
                        to_stride,
                        len,
                        count,
                    };
                    let mut dst = vec![u32::MAX; 4000];
                    Out::new(&mut dst).copy(&src, &m);
                    let mut want = vec![u32::MAX; 4000];
                    for (a, b) in naive(&m) {
                        want[b] = src[a];
                    }
                    assert_eq!(dst, want, "{m:?}");
                }
            }
        }
    }
}

/// Single bytes at steps 2, 3 and 4 (the vector gather and the loop
/// after it), every count around the 16-byte steps, from a source that
/// ends at the line's last byte: the copy equals the naive one and
/// writes nothing else.
#[test]
fn gathered_bytes_match_the_naive_copy() {
    for step in [2usize, 3, 4] {
        for count in (0..80).chain([255, 256, 257, 1000]) {
            for from in [0, 1, 7] {
                let m = LineCopy {
                    from,
                    from_step: step,
                    from_stride: 1,
                    to: 3,
                    to_step: 1,
                    to_stride: 1,
                    len: 1,
                    count,
                };
                let span = from + count.saturating_sub(1) * step + 1;
                #[allow(clippy::cast_possible_truncation, reason = "below 251")]
                let src: Vec<u8> = (0..span).map(|i| (i % 251) as u8).collect();
                let mut dst = vec![255u8; count + 10];
                Out::new(&mut dst).copy(&src, &m);
                let mut want = vec![255u8; count + 10];
                for (a, b) in naive(&m) {
                    want[b] = src[a];
                }
                assert_eq!(dst, want, "{m:?}");
            }
        }
    }
}

/// Streamed lines: stretches around the 16- and 64-byte steps, every
/// alignment of the target, contiguous and stepped lines, in elements
/// of 1, 8 and 16 bytes — equal to the naive copy and writing nothing
/// else.
#[test]
fn streamed_lines_match_the_naive_copy() {
    fn each<T: Copy + PartialEq + std::fmt::Debug>(value: impl Fn(usize) -> T, blank: T) {
        let size = std::mem::size_of::<T>();
        let src: Vec<T> = (0..6000).map(&value).collect();
        for bytes in [64usize, 65, 80, 96, 127, 128, 200, 513, 1024] {
            let len = bytes.div_ceil(size);
            for (count, extra_from, extra_to) in
                [(1, 0, 0), (2, 0, 0), (3, 5, 0), (4, 0, 7), (3, 2, 9)]
            {
                for to in 0..17 {
                    let m = LineCopy {
                        from: 3,
                        from_step: len + extra_from,
                        from_stride: 1,
                        to,
                        to_step: len + extra_to,
                        to_stride: 1,
                        len,
                        count,
                    };
                    let mut dst = vec![blank; 6000];
                    let out = Out::new(&mut dst);
                    out.copy_with(&src, &m, true);
                    Out::<T>::fence(true);
                    let mut want = vec![blank; 6000];
                    for (a, b) in naive(&m) {
                        want[b] = src[a];
                    }
                    assert_eq!(dst, want, "{m:?}, {size}-byte elements");
                }
            }
        }
    }
    #[allow(clippy::cast_possible_truncation, reason = "below 251")]
    each(|i| (i % 251) as u8, 255u8);
    #[allow(clippy::cast_precision_loss, reason = "small integers")]
    each(|i| i as f64, -1.0f64);
    each(|i| (i as u64, !(i as u64)), (0u64, 0u64));
}

#[test]
#[allow(
    clippy::cast_possible_truncation,
    reason = "test values wrap on purpose"
)]
fn tiles_match_the_naive_copy() {
    // A 2-D transpose of rows × len elements, in stretches of `count`,
    // for element sizes whose tiles have different edges.
    fn each<T: Copy + PartialEq + std::fmt::Debug + Default>(value: impl Fn(usize) -> T) {
        let cases = [
            (1, 1, 1),
            (3, 70, 2),
            (33, 17, 1),
            (100, 3, 3),
            (0, 5, 1),
            (150, 70, 2),
        ];
        for (rows, len, count) in cases {
            let src_row = len * count + 3;
            let src: Vec<T> = (0..rows * src_row + 8).map(&value).collect();
            // Target: the transpose, rows contiguous, with a gap per line.
            let to_stride = rows + 2;
            let n = len * count * to_stride + rows + 8;
            let t = TileCopy {
                line: LineCopy {
                    from: 1,
                    from_step: len,
                    from_stride: 1,
                    to: 2,
                    to_step: len * to_stride,
                    to_stride,
                    len,
                    count,
                },
                rows,
                from_row: src_row,
                to_row: 1,
            };
            let mut got = vec![T::default(); n];
            Out::new(&mut got).tiled(&src, &t);
            let mut want = vec![T::default(); n];
            for r in 0..rows {
                for k in 0..count {
                    for j in 0..len {
                        want[2 + r + k * len * to_stride + j * to_stride] =
                            src[1 + r * src_row + k * len + j];
                    }
                }
            }
            assert_eq!(got, want, "{rows} rows of {count} x {len}");
            // The strided line copy goes through the same blocks.
            let line = LineCopy {
                count: rows,
                from_step: src_row,
                to_step: 1,
                ..t.line
            };
            let mut got = vec![T::default(); n];
            Out::new(&mut got).copy(&src, &line);
            let mut want = vec![T::default(); n];
            for i in 0..rows {
                for j in 0..len {
                    want[2 + i + j * to_stride] = src[1 + i * src_row + j];
                }
            }
            assert_eq!(got, want, "a strided line of {rows} x {len}");
        }
    }
    each(|i| i as u8);
    each(|i| i as u32);
    each(|i| i as u64);
    each(|i| [i as u64, !(i as u64)]);
}

/// Transposing lines of 8-byte elements with streamed stores: the target
/// aligned so that the vectors stream (rows of 8 elements starting at a
/// 64-byte boundary, and at a 32-byte one that is not), blocks of several
/// bands and tiles and ragged edges, equal to the naive copy and writing
/// nothing else.
#[test]
fn streamed_transposes_match_the_naive_copy() {
    #[allow(clippy::cast_precision_loss, reason = "small integers")]
    for (rows, len) in [(4usize, 4usize), (36, 130), (128, 72), (131, 67)] {
        for skew in [0, 4] {
            let src_row = len + 5;
            let src: Vec<f64> = (0..rows * src_row).map(|i| i as f64).collect();
            let to_stride = rows.next_multiple_of(8) + 8;
            let n = len * to_stride + 64;
            let mut got = vec![-1.0f64; n];
            // The first element written at a 64-byte boundary, or 32
            // bytes past one.
            let to = got.as_ptr().align_offset(64) + skew;
            let line = LineCopy {
                from: 0,
                from_step: src_row,
                from_stride: 1,
                to,
                to_step: 1,
                to_stride,
                len,
                count: rows,
            };
            Out::new(&mut got).copy_with(&src, &line, true);
            Out::<f64>::fence(true);
            let mut want = vec![-1.0f64; n];
            for (a, b) in naive(&line) {
                want[b] = src[a];
            }
            assert_eq!(got, want, "{rows} x {len}, {skew} elements past 64 bytes");
        }
    }
}

#[test]
fn updating_tiles_match_the_naive_update() {
    use crate::update::{Accumulate, Scale};
    // Transposes of every size around the vector blocks and the tile
    // edges, f64 (vector updates) and f32 (element by element).
    fn each<T: crate::Scalar + Default>(v: impl Fn(usize) -> T, a: T, b: T) {
        for (rows, len) in [(1, 1), (4, 4), (5, 7), (70, 9), (3, 130), (64, 64)] {
            let src_row = len + 1;
            let src: Vec<T> = (0..rows * src_row).map(&v).collect();
            let to_stride = rows + 3;
            let n = len * to_stride + 1;
            let t = TileCopy {
                line: LineCopy {
                    from: 0,
                    from_step: 0,
                    from_stride: 1,
                    to: 1,
                    to_step: 0,
                    to_stride,
                    len,
                    count: 1,
                },
                rows,
                from_row: src_row,
                to_row: 1,
            };
            let old: Vec<T> = (0..n).map(|i| v(i + 7)).collect();
            let mut scaled = vec![T::default(); n];
            let mut accumulated = old.clone();
            let m = CopyOp::Tile(t);
            Out::new(&mut scaled).apply_with(
                &src,
                &m,
                (false, false),
                Scale {
                    alpha: a,
                    conjugate: false,
                },
            );
            let acc = Accumulate {
                alpha: a,
                beta: b,
                conjugate: false,
            };
            Out::new(&mut accumulated).apply_with(&src, &m, (false, false), acc);
            for r in 0..rows {
                for j in 0..len {
                    let (d, x) = (1 + r + j * to_stride, src[r * src_row + j]);
                    assert_eq!(scaled[d], a * x, "{rows} x {len}: ({r}, {j})");
                    assert_eq!(accumulated[d], b * old[d] + a * x, "{rows} x {len}");
                }
            }
            // Elements outside the tile stay as they were.
            assert_eq!(accumulated[0], old[0]);
        }
    }
    each(|i| i as f64 * 0.5, 2.0, -3.0);
    each(|i| i as f32 * 0.25, 3.0, 0.5);
}

#[test]
#[should_panic(expected = "outside")]
fn a_line_outside_the_storage_is_refused() {
    let src = [1u8; 10];
    let mut dst = [0u8; 10];
    let m = LineCopy {
        from: 0,
        from_step: 4,
        from_stride: 1,
        to: 0,
        to_step: 2,
        to_stride: 1,
        len: 2,
        count: 3,
    };
    Out::new(&mut dst).copy(&src[..9], &m); // reads up to index 9
}
