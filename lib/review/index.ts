/** lib/review: the review queue of custody-review (docs/nodes.md "custody-review"). */
export * from './rules';
export * from './store';
export * from './queue';
export * from './facts';
export * from './write-back';
