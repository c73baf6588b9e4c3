//! How a launch walks its work: which blocks own steps and how many, as the protocol monitor must
//! see them reach their end and as the pipeline model counts a block's steps.

/// The walk of one launch of a variant on a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    /// Blocks that own at least one step (each reaches the end of its walk).
    pub blocks: u32,
    /// Pipeline steps over every block of the launch.
    pub steps: u64,
    /// The most steps one block walks.
    pub longest: u64,
}

impl Walk {
    /// `tiles` tiles of `steps` steps each, a launch of `blocks` blocks taking tiles
    /// `b, b + blocks, ...`: `min(blocks, tiles)` blocks own work.
    pub fn strided(tiles: u64, steps: u64, blocks: u32) -> Walk {
        let blocks = u64::from(blocks.max(1));
        Walk {
            blocks: blocks.min(tiles) as u32,
            steps: tiles * steps,
            longest: tiles.div_ceil(blocks) * steps,
        }
    }

    /// One block per tile, tile `i` walking `steps(i)` steps (at least one each).
    pub fn uneven(tiles: u64, steps: impl Fn(u64) -> u64) -> Walk {
        let (total, longest) = (0..tiles).fold((0, 0), |(t, l), i| {
            let s = steps(i);
            (t + s, l.max(s))
        });
        Walk {
            blocks: tiles as u32,
            steps: total,
            longest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strided_walk_counts_the_blocks_that_own_tiles_and_the_most_one_takes() {
        let w = Walk::strided(10, 4, 3);
        assert_eq!((w.blocks, w.steps, w.longest), (3, 40, 16));
        let few = Walk::strided(2, 5, 132);
        assert_eq!((few.blocks, few.steps, few.longest), (2, 10, 5));
    }

    #[test]
    fn an_uneven_walk_sums_each_tiles_steps() {
        let w = Walk::uneven(4, |i| i + 1);
        assert_eq!((w.blocks, w.steps, w.longest), (4, 10, 4));
    }
}
