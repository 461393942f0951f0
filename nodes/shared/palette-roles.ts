/**
 * The palette colour of every flow node of the pack, by the node's role (docs/nodes.md "Palette
 * colours"): what the node is mostly for, so that a flow shows at a glance where money moves.
 * - `moves`: it moves money or decides an action (transfer, withdraw, swap make and take,
 *   liquidity hub, sweep, action) or can send any signed call (request);
 * - `reads`: it reads, or sets up accounts and policies without moving money (assets, read,
 *   company, trusted party, fund, core client, policy, portfolio);
 * - `feeds`: a feed and the nodes that decide or follow what feeds bring (core client feed, hub
 *   feed, wallets feed, approver, review, track).
 * The config node (custody-config) keeps Node-RED's config colour. Pure data, read by the build
 * (scripts/templates.ts `colour(type)`) into every dialog's `registerType`.
 */

/** A node's role in the palette. */
export type PaletteRole = 'moves' | 'reads' | 'feeds';

/** The colour of each role: warm for money, the pack's blue for reads, green for feeds and their deciders. */
export const ROLE_COLOURS: Record<PaletteRole, string> = {
  moves: '#E9967A',
  reads: '#A3C9E8',
  feeds: '#A8D5A2',
};

/** What each role is called in the docs' palette tables. */
export const ROLE_NAMES: Record<PaletteRole, string> = {
  moves: 'moves money or decides',
  reads: 'reads and sets up',
  feeds: 'feeds and their deciders',
};

/** Every flow node type of the pack (not the config node) -> its role. */
export const NODE_ROLES: Record<string, PaletteRole> = {
  'custody-transfer': 'moves',
  'custody-withdraw': 'moves',
  'custody-swap-make': 'moves',
  'custody-swap-take': 'moves',
  'custody-liquidity-hub': 'moves',
  'custody-sweep': 'moves',
  'custody-action': 'moves',
  'custody-request': 'moves',
  'custody-assets': 'reads',
  'custody-read': 'reads',
  'custody-company': 'reads',
  'custody-trusted-party': 'reads',
  'custody-fund': 'reads',
  'custody-core-client': 'reads',
  'custody-policy': 'reads',
  'custody-portfolio': 'reads',
  'custody-coreclient-feed': 'feeds',
  'custody-hub-feed': 'feeds',
  'custody-wallets-feed': 'feeds',
  'custody-approver': 'feeds',
  'custody-review': 'feeds',
  'custody-track': 'feeds',
};

/**
 * The palette colour of a flow node type.
 * @throws {Error} for a type without a role (every node must have one: a build error).
 */
export function paletteColour(type: string): string {
  const role = NODE_ROLES[type];
  if (!role) throw new Error(`palette-roles: no role for ${type}`);
  return ROLE_COLOURS[role];
}
