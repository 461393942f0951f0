/*
 * CustodyFlow: the Coordination section of the custody-config edit dialog, bundled into
 * resources/custody-coordination.js and loaded by nodes/custody-config/custody-config.html
 * before its own script:
 *   <script type="text/javascript" src="resources/@custodyflow/node-red-custody/custody-coordination.js"></script>
 * Defines window.CustodyCoordination once.
 *
 * What it does (docs/scale-out.md, the node's help "Coordination through Redis"):
 * - the validators of the Redis settings, the same rules as the runtime's (lib
 *   coordination/redis-connection.ts `checkRedisUrl` and `parseRedisAddresses`, which check again when
 *   the flow starts; kept here because Node-RED's validators run synchronously in the browser);
 * - the rows of the Redis mode chosen (standalone: the URL; Sentinel: the sentinels, the master
 *   name and the sentinel password; Cluster: the seed nodes), shown only with coordination Redis;
 * - the state line of the deployed node (GET custodyflow/config/:id/coordination, admin.ts);
 * - the Redis fields of the Test connection body (POST custodyflow/config/test, admin.ts).
 *
 * Texts come from the node's catalog (locales/en-US/custody-config.json) through the dialog's `t`.
 */

/** A text of the custody-config catalog: `t("errors.redisUrlRequired")` for `custody-config.errors.redisUrlRequired`. */
export type Translate = (key: string, params?: Record<string, unknown>) => string;

/** How the config node reaches Redis (connection.ts ConnectionSettings `redisMode`); absent means standalone. */
export type RedisMode = 'standalone' | 'sentinel' | 'cluster';

/** The Redis modes, in the order of the dialog's select. */
const REDIS_MODES: readonly RedisMode[] = ['standalone', 'sentinel', 'cluster'];

/**
 * The address list properties: their mode, and the port of an entry without one (as
 * nodes/custody-config/connection.ts passes them to parseRedisAddresses: a sentinel's 26379, a
 * Redis node's 6379).
 */
const ADDRESS_FIELDS: Record<string, { mode: RedisMode; defaultPort: number }> = {
  redisSentinels: { mode: 'sentinel', defaultPort: 26379 },
  redisClusterNodes: { mode: 'cluster', defaultPort: 6379 },
};

/** The master name a Sentinel node uses when none is stored (lib CoordinatorOptions `masterName`). */
const DEFAULT_MASTER_NAME = 'mymaster';

/** The deployed node's coordination states (nodes/shared/types.ts CoordinationStatus `state`): the catalog's custody-config.coordinationStates.*. */
const COORDINATION_STATES = ['connecting', 'ready', 'recovering', 'down', 'closed'];

/** The coordination of a deployed config node as GET custodyflow/config/:id/coordination answers it (nodes/shared/types.ts CoordinationStatus). */
export interface CoordinationStatusView {
  coordination: string;
  state?: string;
  reason?: string;
  instance?: string;
  mode?: string;
  /** `host:port` of the Redis (master) the node talks to, '' before its first connect. */
  master?: string;
  /** Epoch milliseconds since when that master is the one. */
  masterSince?: number;
  /** How many times the master changed since the node started. */
  failovers?: number;
}

/** The mode of a stored or typed value: `standalone` for an absent or empty one. */
function modeOf(v: unknown): string {
  return v === undefined || v === null || v === '' ? 'standalone' : String(v);
}

/** True when `v` is one of the Redis modes, or absent (a node from before the modes existed: standalone). */
function checkMode(v: unknown, t: Translate): true | string {
  return REDIS_MODES.indexOf(modeOf(v) as RedisMode) >= 0 || t('errors.redisMode');
}

/**
 * The rule of lib/coordination/redis-connection.ts checkRedisUrl: redis:// or rediss://, a host, no
 * password (the password is a credential).
 * @returns true, or the message naming the field.
 */
function checkRedisUrl(v: unknown, t: Translate): true | string {
  const text = String(v || '').trim();
  if (!text) return t('errors.redisUrlRequired');
  let u: URL;
  try {
    u = new URL(text);
  } catch (e) {
    return t('errors.redisUrlNotUrl');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return t('errors.redisUrlProtocol');
  if (!u.hostname) return t('errors.redisUrlHost');
  if (u.password) return t('errors.redisUrlPassword');
  return true;
}

/** One `host:port` entry as lib/coordination/redis-connection.ts parseRedisAddresses takes it: an IPv6 host in brackets, the port optional. */
const ADDRESS_ENTRY = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:@/[\]\s]+))(?::(\d+))?$/;

/**
 * The rule of lib/coordination/redis-connection.ts parseRedisAddresses: `host:port` entries
 * separated by commas or white space, at least one, each a host (a name, an IPv4 address, or an
 * IPv6 address in brackets) and a port from 1 to 65535 (`defaultPort` when it has none).
 * @param label the field's name as the dialog shows it (the message starts with it).
 * @returns true, or the message naming the field and the first bad entry.
 */
function checkAddresses(v: unknown, label: string, t: Translate, defaultPort: number): true | string {
  const entries = String(v === undefined || v === null ? '' : v)
    .split(/[\s,]+/)
    .filter((e) => e !== '');
  if (entries.length === 0) return t('errors.addressesRequired', { field: label });
  for (let i = 0; i < entries.length; i++) {
    const m = ADDRESS_ENTRY.exec(entries[i]);
    const port = m && m[3] !== undefined ? Number(m[3]) : defaultPort;
    if (!m || !(port >= 1 && port <= 65535)) return t('errors.addressEntry', { field: label, n: i + 1, entry: entries[i] });
  }
  return true;
}

/** The Sentinel master name rule: not empty (a stored node without one uses `mymaster`). */
function checkMasterName(v: unknown, t: Translate): true | string {
  const text = v === undefined || v === null ? DEFAULT_MASTER_NAME : String(v);
  return text.trim() !== '' || t('errors.redisMasterName');
}

/**
 * The validator of a Coordination property of the custody-config defaults, bound to the dialog's
 * `t` and its readers of the coordination and the mode being edited (or stored).
 * @param property one of redisMode, redisUrl, redisSentinels, redisMasterName, redisClusterNodes.
 * @returns a `validate(v, opt)` for the defaults: it checks only with coordination Redis and in
 *   the property's own mode.
 */
function validator(property: string, t: Translate, coordinationOf: (node: unknown) => string, modeOfNode: (node: unknown) => string): (this: unknown, v: unknown, opt?: object) => true | string {
  // Two parameters: Node-RED counts the text of a validator of (v, opt) as invalid (of one parameter, as valid).
  return function (v, _opt) {
    if (coordinationOf(this) !== 'redis') return true;
    if (property === 'redisMode') return checkMode(v, t);
    const mode = modeOf(modeOfNode(this));
    if (property === 'redisUrl') return mode !== 'standalone' || checkRedisUrl(v, t);
    if (property === 'redisMasterName') return mode !== 'sentinel' || checkMasterName(v, t);
    const field = ADDRESS_FIELDS[property];
    if (!field) throw new Error('CustodyCoordination.validator: unknown property ' + property);
    const label = property === 'redisSentinels' ? t('label.redisSentinels') : t('label.redisClusterNodes');
    return mode !== field.mode || checkAddresses(v, label, t, field.defaultPort);
  };
}

/**
 * Show the Redis rows of the open dialog that apply: `.custody-config-redis` (every mode) with
 * coordination Redis, and `.custody-config-redis-<mode>` only in that mode too.
 */
function showRows(): void {
  const redis = $('#node-config-input-coordination').val() === 'redis';
  const mode = modeOf($('#node-config-input-redisMode').val());
  $('.custody-config-redis').toggle(redis);
  REDIS_MODES.forEach((m) => $('.custody-config-redis-' + m).toggle(redis && mode === m));
}

/**
 * Set up the Coordination section of the open dialog of `node`: the defaults of a node from before
 * the modes existed (standalone, master name `mymaster`), the rows of the mode, and the validation
 * again of the fields whose rules depend on the coordination and the mode.
 */
function prepare(node: Record<string, unknown>): void {
  const modeSelect = $('#node-config-input-redisMode');
  if (!modeSelect.val()) modeSelect.val('standalone');
  if (node.redisMasterName === undefined) $('#node-config-input-redisMasterName').val(DEFAULT_MASTER_NAME);
  const revalidate = () => {
    showRows();
    ['signingMode', 'redisUrl', 'redisSentinels', 'redisMasterName', 'redisClusterNodes'].forEach((p) => $('#node-config-input-' + p).trigger('change'));
  };
  $('#node-config-input-coordination, #node-config-input-redisMode').on('change', revalidate);
  revalidate();
}

/** The Redis fields of the Test connection body, read from the open dialog (coordination Redis only). */
function testFields(): Record<string, unknown> {
  const val = (name: string) => $('#node-config-input-' + name).val();
  return {
    redisMode: modeOf(val('redisMode')),
    redisUrl: val('redisUrl'),
    redisSentinels: val('redisSentinels'),
    redisMasterName: val('redisMasterName'),
    redisClusterNodes: val('redisClusterNodes'),
    redisTls: $('#node-config-input-redisTls').prop('checked'),
    redisKeyPrefix: val('redisKeyPrefix'),
    claimLeaseSeconds: val('claimLeaseSeconds'),
    // "__PWRD__" when a stored password is left unchanged: the runtime uses the stored one.
    redisPassword: val('redisPassword'),
    redisSentinelPassword: val('redisSentinelPassword'),
  };
}

/** `at` (epoch ms) as a local time; with the date when it is not today. */
function localTime(at: number): string {
  const d = new Date(at);
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

/** The state line's text of a deployed node's coordination. */
function stateText(s: CoordinationStatusView, t: Translate): string {
  if (s.coordination !== 'redis') return t('coordination.none');
  const mode = s.mode && REDIS_MODES.indexOf(s.mode as RedisMode) >= 0 ? t('coordination.modes.' + s.mode) : '';
  let master = '';
  if (mode && s.master) master = t('coordination.master', { mode, master: s.master, since: s.masterSince ? localTime(s.masterSince) : '?' });
  else if (mode) master = t('coordination.mode', { mode });
  return t('coordination.redis', {
    state: COORDINATION_STATES.indexOf(s.state || '') >= 0 ? t('coordinationStates.' + s.state) : s.state || '?',
    reason: s.reason && s.state !== 'ready' ? ' (' + s.reason + ')' : '',
    master,
    failovers: s.failovers && s.failovers > 0 ? t('coordination.failovers', { count: s.failovers }) : '',
    instance: s.instance ? t('coordination.instance', { instance: s.instance }) : '',
  });
}

/**
 * Fill the state line `line` with the deployed coordination of node `id` (its data-coordination,
 * data-state, data-mode, data-master and data-failovers attributes too), or say the node is not
 * deployed; hide it when the runtime cannot tell.
 */
function showState(line: JQuery, id: string, t: Translate): void {
  $.ajax({ url: 'custodyflow/config/' + encodeURIComponent(id) + '/coordination', dataType: 'json' })
    .done((s: CoordinationStatusView) => {
      line
        .attr('data-coordination', s.coordination)
        .attr('data-state', s.state || '')
        .attr('data-mode', s.coordination === 'redis' ? s.mode || '' : '')
        .attr('data-master', s.master || '')
        .attr('data-failovers', String(s.failovers || 0))
        .text(stateText(s, t))
        .show();
    })
    .fail((xhr: JQuery.jqXHR) => {
      if (xhr.status === 404) line.attr('data-coordination', '').attr('data-state', 'notDeployed').text(t('coordination.notDeployed')).show();
      else line.hide();
    });
}

/** What window.CustodyCoordination holds. */
export interface CustodyCoordinationApi {
  MODES: string[];
  checkRedisUrl: typeof checkRedisUrl;
  checkAddresses: typeof checkAddresses;
  checkMasterName: typeof checkMasterName;
  validator: typeof validator;
  prepare: typeof prepare;
  showRows: typeof showRows;
  testFields: typeof testFields;
  stateText: typeof stateText;
  showState: typeof showState;
}

declare global {
  interface Window {
    CustodyCoordination?: CustodyCoordinationApi;
  }
}

if (!window.CustodyCoordination) {
  window.CustodyCoordination = { MODES: REDIS_MODES.slice(), checkRedisUrl, checkAddresses, checkMasterName, validator, prepare, showRows, testFields, stateText, showState };
}
