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

    /// Tile `i` walking `steps(i)` steps (at least one each), a launch of `blocks` blocks taking
    /// runs of `run` tiles `r, r + blocks, ...` (one each where there are as many blocks as runs).
    pub fn uneven(tiles: u64, blocks: u32, run: u64, steps: impl Fn(u64) -> u64) -> Walk {
        let runs = tiles.div_ceil(run.max(1));
        let blocks = u64::from(blocks.max(1)).min(runs.max(1));
        let mut per_block = vec![0u64; blocks as usize];
        for i in 0..tiles {
            per_block[(i / run.max(1) % blocks) as usize] += steps(i);
        }
        Walk {
            blocks: blocks.min(runs) as u32,
            steps: per_block.iter().sum(),
            longest: per_block.into_iter().max().unwrap_or(0),
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
        let w = Walk::uneven(4, 4, 1, |i| i + 1);
        assert_eq!((w.blocks, w.steps, w.longest), (4, 10, 4));
        // two blocks: tiles 0 and 2 (1 + 3 steps), 1 and 3 (2 + 4)
        let two = Walk::uneven(4, 2, 1, |i| i + 1);
        assert_eq!((two.blocks, two.steps, two.longest), (2, 10, 6));
        let many = Walk::uneven(3, 100, 1, |_| 5);
        assert_eq!((many.blocks, many.steps, many.longest), (3, 15, 5));
        // runs of two: block 0 takes tiles 0, 1, 4 (1 + 2 + 5), block 1 tiles 2, 3 (3 + 4); five
        // tiles are three runs, so a third block would own one and a fourth none
        let pairs = Walk::uneven(5, 2, 2, |i| i + 1);
        assert_eq!((pairs.blocks, pairs.steps, pairs.longest), (2, 15, 8));
        let wide = Walk::uneven(5, 4, 2, |i| i + 1);
        assert_eq!((wide.blocks, wide.steps, wide.longest), (3, 15, 7));
    }
}
