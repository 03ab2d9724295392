// dashboard.js — the dashboard: reads the JSON API, shows the daemon's own SVG plots, follows server-sent events.
'use strict';
(() => {
const $ = (sel, root = document) => root.querySelector(sel);
const TOKEN_KEY = 'heatcurve-token';
const PLOT_MIN_MS = 5000;       // a plot is fetched again at most this often while samples arrive
const RECONNECT_MS = 30000;     // EventSource gives up on an HTTP error; try again after this
const COMPARE_MAX = 7;          // what compare.svg draws at most

const st = { runs: null, view: '', runId: 0, run: null, compare: [], missed: false, doc: null, alerts: [], throttled: {} };

// --- requests ---

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// The daemon's errors are {"error": {"code", "message"}}; anything else
// (a proxy's HTML page) still becomes a message naming the request.
async function errorOf(resp, what) {
  let doc = null;
  try {
    doc = JSON.parse(await resp.text());
  } catch (e) { /* not JSON: the status says enough */ }
  const err = doc && doc.error;
  return new ApiError(resp.status, err ? err.code : 'http',
                      err ? err.message : `${what}: HTTP ${resp.status} ${resp.statusText}`);
}

async function request(method, path, body) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token)
    headers.Authorization = 'Bearer ' + token;
  if (body !== undefined)
    headers['Content-Type'] = 'application/json';
  let resp;
  try {
    resp = await fetch(path, { method, headers, cache: 'no-store',
                               body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'network', `${method} ${path}: the daemon does not answer (${e.message})`);
  }
  if (!resp.ok)
    throw await errorOf(resp, `${method} ${path}`);
  return resp;
}

const get = async path => (await request('GET', path)).json();

// A request that changes state: on 401/403 it asks for the token and tries
// again with it, as long as the user gives one.
async function change(method, path, body, errEl) {
  for (;;) {
    try {
      return await (await request(method, path, body)).json();
    } catch (e) {
      if (e.status !== 401 && e.status !== 403)
        throw e;
      showError(errEl, e);
      if (!await askToken(e.message))
        throw e;
      showError(errEl, null);
    }
  }
}

let authDone = null;

function askToken(why) {
  const form = $('#auth');
  if (authDone)
    authDone(false);
  $('#auth-why').textContent = `The daemon refused: ${why}`;
  form.hidden = false;
  form.token.value = sessionStorage.getItem(TOKEN_KEY) || '';
  form.token.focus();
  return new Promise(resolve => {
    authDone = ok => {
      authDone = null;
      form.hidden = true;
      resolve(ok);
    };
  });
}

function showError(el, e) {
  el = el || $('#error');
  el.hidden = !e;
  el.textContent = !e ? '' : e.status ? `Error ${e.status} (${e.code}): ${e.message}` : `Error: ${e.message}`;
}

// --- formatting ---

const DASH = '—';
// One rule with the CLI and the SVG (util_fixed_text()): half away from zero, no "-0".
function num(x, d) {
  if (x == null || !isFinite(x))
    return DASH;
  const u = Math.round(Math.abs(x) * 10 ** d);
  return (x < 0 && u ? '-' : '') + (u / 10 ** d).toFixed(d);
}
const degC = x => x == null ? DASH : num(x, 1) + ' °C';
const mhz = hz => num(hz * 1e-6, 0);
const pct = f => f == null ? DASH : num(f * 100, f < 0.1 ? 1 : 0) + ' %';
// One time format, the plots': 24-hour UTC, whatever the browser's locale and zone.
const utc = ms => new Date(ms).toISOString();
const when = ms => ms == null ? DASH : `${utc(ms).slice(0, 10)} ${utc(ms).slice(11, 19)}`;
const clock = ms => ms == null ? DASH : utc(ms).slice(11, 19);

// As compare.svg and the run's plot write durations (plot.c's fmt_duration()).
function secs(s) {
  if (s == null)
    return DASH;
  const a = Math.abs(s);
  return a < 120 ? num(s, 0) + ' s' : a < 7200 ? num(s / 60, 1) + ' min' : num(s / 3600, 2) + ' h';
}

// Elements from text only: labels and sensor names are never parsed as HTML.
function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {}))
    if (v != null)
      k === 'class' ? e.className = v : k.startsWith('data-') ? e.setAttribute(k, v) : e[k] = v;
  e.append(...kids.filter(k => k != null));
  return e;
}

const td = (text, cls) => h('td', { class: cls }, text);

// --- live: sensors ---

function trips(t) {
  const parts = (t.trips || []).map(p => `${p.type} ${num(p.celsius, 0)}`);
  if (t.max_celsius != null)
    parts.push(`max ${num(t.max_celsius, 0)}`);
  if (t.crit_celsius != null)
    parts.push(`crit ${num(t.crit_celsius, 0)}`);
  return parts.join(', ') || DASH;
}

function status(x, lastGood) {
  if (x.ok)
    return td('ok', 'ok');
  return td(`error: ${x.error || 'unknown'}` + (lastGood ? ` (last good ${clock(lastGood)})` : ''), 'bad');
}

// Where the reading stands against its trips (hwmon: max is hot, crit critical).
const LEVELS = { passive: ['passive', '▲'], hot: ['hot', '▲'], critical: ['critical', '✖'] };
function level(t) {
  if (!t.ok || t.celsius == null)
    return null;
  const at = (x, name) => x != null && t.celsius >= x ? name : null;
  const marks = [...(t.trips || []).map(p => at(p.celsius, p.type)), at(t.max_celsius, 'hot'),
                 at(t.crit_celsius, 'critical')];
  return ['critical', 'hot', 'passive'].find(l => marks.includes(l)) || 'ok';
}

function levelCell(t) {
  const l = level(t), [word, icon] = LEVELS[l] || [l, '✓'];
  const alerts = st.alerts.filter(a => a.sensor === t.id).map(a => `alert ${a.name} ${a.state}`);
  return td(l ? [`${icon} ${word}`, ...alerts].join(' · ') : DASH, 'level' + (l ? ' level-' + l : ''));
}

// The policy runs below its hardware maximum because it is capped or a cooling device or the firmware acts;
// with the share of the last 15 min it was throttled, when any.
function throttled(p, doc) {
  const why = [p.scaling_max_hz && p.max_hz && p.scaling_max_hz < p.max_hz && `capped at ${mhz(p.scaling_max_hz)} of ${mhz(p.max_hz)} MHz`,
               p.throttled && 'a cooling device acts', doc.power && doc.power.firmware_throttled && 'the firmware throttles'];
  const share = st.throttled[p.id], past = share > 0 ? `throttled ${pct(share)} of the last 15 min` : '';
  const text = why.filter(Boolean).join('; ');
  return text || past ? h('span', { class: 'badge' + (text ? '' : ' past'), title: [text || 'not now', past].filter(Boolean).join('; ') },
                          'throttled', past && h('small', null, ` ${pct(share)} of 15 min`)) : null;
}

// The share of the last 15 min each policy was throttled, by the history
// plot's rule (plot.h, plot_throttled()): its clock below the hardware maximum
// by more than 0.5 % while the load was at least 50 % (the clock alone where
// the history keeps no load); buckets without a load do not count.
let throttleLast = 0;
async function loadThrottled(force) {
  if (!force && Date.now() - throttleLast < 30000)
    return;
  throttleLast = Date.now();
  try {
    const series = (await get('/api/v1/history?points=300')).series;
    const load = series.find(s => s.kind === 'load');
    st.throttled = {};
    for (const p of (st.doc && st.doc.cpufreq) || []) {
      const f = series.find(s => s.id === `cpufreq:${p.id}`);
      const at = f && p.max_hz ? f.mean.map((hz, i) => hz == null || (load && load.mean[i] == null) ? null :
                                         hz < p.max_hz * 0.995 && !(load && load.mean[i] < 0.5)).filter(x => x != null) : [];
      st.throttled[p.id] = at.length ? at.filter(Boolean).length / at.length : null;
    }
    if (st.doc)
      renderSensors(st.doc);
  } catch (e) {
    console.warn('heatcurve: no throttled share', e.message);
  }
}

// A channel's value as shown, by its unit: [text of the value, cell class, unit's name].
const UNITS = {
  celsius: [x => num(x, 1), 'temp', '°C'], hz: [mhz, 'freq', 'MHz'], fraction: [x => num(x * 100, 1), 'load', '%'],
  state: [x => num(x, 0), 'state', 'state'], flag: [x => x ? 'yes' : 'no', 'flag', 'flag'],
};

// One row per channel of /api/v1/sensors, in its order; what more a section of the
// document says of the same id (a temperature's trips, label and error) fills the rest.
function renderSensors(doc) {
  st.doc = doc;
  const temps = doc.temperatures || [];
  const more = Object.fromEntries([...temps, ...(doc.cooling_devices || [])].map(x => [x.id, x]));
  $('#sensors tbody').replaceChildren(...(doc.channels || []).map(c => {
    const t = more[c.id] || {}, [fmt, cls, unit] = UNITS[c.unit] || [x => num(x, 3), '', c.unit];
    return h('tr', { 'data-id': c.id },
      h('th', { scope: 'row' }, c.id, h('small', null, [t.label, t.type, t.mirror_of && `same as ${t.mirror_of}`, unit]
        .filter(Boolean).join(' · '))),
      td(c.value == null ? DASH : fmt(c.value), 'num ' + cls), td(trips(t)), status({ ...t, ok: c.ok }, t.last_good_ms),
      levelCell({ ...t, id: c.id }));
  }));
  const hot = temps.filter(t => t.ok && t.celsius != null).sort((a, b) => b.celsius - a.celsius)[0];
  $('#hottest').textContent = hot ? `${degC(hot.celsius)} ${hot.id}` : DASH;
  $('#cpufreq tbody').replaceChildren(...(doc.cpufreq || []).map(p => h('tr', { 'data-id': p.id },
    h('th', { scope: 'row' }, p.id, ' ', throttled(p, doc)), td(mhz(p.cur_hz != null ? p.cur_hz : p.cpuinfo_cur_hz), 'num freq'),
    td(`${mhz(p.scaling_min_hz)}–${mhz(p.scaling_max_hz)} (hw ${mhz(p.min_hz)}–${mhz(p.max_hz)})`),
    td(p.governor || DASH), td((p.cpus || []).join(', ')), status(p))));
  const load = doc.load || {};
  $('#load').textContent = load.ok ? pct(load.total) : `error: ${load.error || 'unknown'}`;
  $('#load-cpus').textContent = load.ok && load.per_cpu ? load.per_cpu.map(pct).join(' · ') : '';
  $('#updated').textContent = doc.time_ms == null ? DASH : clock(doc.time_ms) + ' UTC';
  renderAlerts(st.alerts);
}

// Each active alert with its sensor's value now (the alert keeps the one it changed state at).
function renderAlerts(active) {
  const el = $('#alerts'), temps = (st.doc && st.doc.temperatures) || [];
  st.alerts = active || [];
  const now = a => {
    const t = temps.find(x => x.id === a.sensor);
    return t && t.ok ? t.celsius : a.value_c;
  };
  // a forecast: "thermal_zone0 reaches 80 °C in about 6 min", counted down on the board's clock
  const soon = a => {
    const left = Math.max(0, a.eta_s - (st.doc ? (st.doc.time_ms - a.since_ms) / 1000 : 0));
    return `${a.sensor} reaches ${degC(a.level_c)} in about ${left < 90 ? num(left, 0) + ' s' : num(left / 60, 0) + ' min'}`;
  };
  el.textContent = !st.alerts.length ? 'none' :
    st.alerts.map(a => `${a.name} ${a.state}` + (a.state === 'forecast' && a.eta_s != null ? ` (${soon(a)})` :
      a.sensor ? ` (${a.sensor} ${degC(now(a))})` : '')).join(', ');
  const worst = ['crit', 'lost', 'warn'].find(w => st.alerts.some(a => a.state === w));
  el.className = st.alerts.length ? `bad alert-${worst || 'warn'}` : 'ok';
}

// --- plots ---

// The daemon draws every plot; the page fetches the SVG itself (so an error
// answer is shown, not a broken image) and shows it as a blob: image.
class Plot {
  constructor(img) {
    this.img = img;
    this.err = img.nextElementSibling;
    this.url = '';
    this.last = 0;
    this.timer = 0;
    this.busy = false;
    this.again = false;
  }

  show(url) {
    if (url === this.url && this.img.src)
      return this.refresh();
    this.url = url;
    this.load();
  }

  // Again, but not more often than PLOT_MIN_MS.
  refresh() {
    if (!this.url || this.timer)
      return;
    this.timer = setTimeout(() => {
      this.timer = 0;
      this.load();
    }, Math.max(0, this.last + PLOT_MIN_MS - Date.now()));
  }

  async load() {
    if (this.busy) {
      this.again = true;
      return;
    }
    const url = this.url;
    this.busy = true;
    this.last = Date.now();
    try {
      const resp = await fetch(url, { cache: 'no-store' });
      if (!resp.ok)
        throw await errorOf(resp, `GET ${url}`);
      const blob = await resp.blob();
      if (url === this.url) {
        const old = this.img.src;
        this.img.src = URL.createObjectURL(blob);
        this.img.dataset.url = url;
        this.img.hidden = false;
        if (old.startsWith('blob:'))
          URL.revokeObjectURL(old);
        showError(this.err, null);
      }
    } catch (e) {
      showError(this.err, e instanceof ApiError ? e : new ApiError(0, 'network', e.message));
    } finally {
      this.busy = false;
    }
    if (this.again) {
      this.again = false;
      this.refresh();
    }
  }
}

const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

// Drawn at the size it is shown, so that its text stays readable on a phone.
function plotSize(img, minHeight, ratio) {
  const w = clamp(Math.round(img.parentElement.clientWidth) || 960, 320, 1600);
  return `width=${w}&height=${clamp(Math.round(w * ratio), minHeight, 1000)}` + (DARK.matches ? '&theme=dark' : '');
}

// The plots in the page's scheme: drawn again when it changes.
const DARK = matchMedia('(prefers-color-scheme: dark)');

const chart = new Plot($('#chart'));
const runPlot = new Plot($('#run-plot'));
const comparePlot = new Plot($('#compare-plot'));

// --- runs ---

const runName = r => `#${r.id}` + (r.label ? ` ${r.label}` : '');

function runState(r) {
  if (r.state === 'waiting')
    return `waiting to start at ${when(r.start_at_ms)} UTC`;
  if (r.state !== 'running')
    return r.state + (r.abort_reason ? `: ${r.abort_reason}` : '');
  return `running, ${r.phase} (phase ${r.phase_index + 1} of ${r.phases.length})`;
}

// A plateau with its 95 % interval, low–high (it is not symmetric); "not known yet" while the
// interval is wider than the rise so far; an older run without the interval shows ± its larger half.
function plateau(p, lo, hi, rise, ci) {
  if (lo == null || hi == null)
    return p == null ? DASH : degC(p) + (ci != null ? ` ±${num(ci, 1)}` : '');
  if (p == null || (rise != null && hi - lo > Math.abs(rise))) return 'not known yet';
  return `${degC(p)} (${num(lo, 1)}–${num(hi, 1)})`;
}

// What a run held by throttling has instead of a plateau, as heatcurvectl says it
// (analysis_regulated_text()); short: the temperature only, for the tables.
function regulated(m, short) {
  if (m.regulated_c == null)
    return '';
  const at = `regulated at ${degC(m.regulated_c)}`;
  if (m.throttled_fraction == null)
    return 'possibly ' + at + (short ? '' : ' (flat at a firmware limit, no clock recorded)');
  if (short)
    return at;
  const work = m.work_rate_drop_pct == null ? '' : num(-m.work_rate_drop_pct, 1);
  return `${at}, throttled ${num(m.throttled_fraction * 100, 0)} %` +
    (work ? `, work ${work[0] === '-' ? '' : '+'}${work} %` : '');
}

const riseSoFar = (now, base) => now == null || base == null ? null : now - base;
const metricsPlateau = (m, short) => regulated(m, short) || plateau(m.plateau_c, m.plateau_low_c, m.plateau_high_c,
  riseSoFar(m.peak_c, m.baseline_c), m.plateau_ci95_c);

function renderRuns() {
  const runs = st.runs || [];
  $('#runs-empty').hidden = runs.length > 0;
  $('#runs tbody').replaceChildren(...runs.map(r => {
    const m = r.metrics || {};
    return h('tr', { 'data-id': r.id },
      h('th', { scope: 'row' }, h('a', { href: `#/runs/${r.id}` }, runName(r))),
      td(runState(r), 'state ' + r.state), td(when(r.created_ms)),
      td(degC(m.baseline_c), 'num'), td(degC(m.peak_c), 'num'), td(metricsPlateau(m, true), 'num'),
      td(degC(m.rise_over_ambient_c), 'num'), td(secs(m.tau_heat_s), 'num'),
      td(secs(m.tau_cool_s), 'num'), td(pct(m.throttled_fraction), 'num'));
  }));
  const cur = runs.find(r => r.state === 'running' || r.state === 'waiting');
  $('#current').hidden = !cur;
  if (cur) {
    $('#current-text').replaceChildren('Running: ', h('a', { href: `#/runs/${cur.id}` }, runName(cur)),
                                       ` — ${runState(cur)}`);
    $('#current .stop').dataset.run = cur.id;
  }
  if (st.view === 'compare')
    renderCompareList();
}

async function loadRuns() {
  try {
    st.runs = (await get('/api/v1/runs')).runs || [];
    renderRuns();
  } catch (e) {
    showError(null, e);
  }
}

function phaseEnds(p) {
  if (p.duration)
    return p.duration;
  const lim = [p.min && `min ${p.min}`, p.max && `max ${p.max}`].filter(Boolean).join(', ');
  return `until ${p.until}` + (lim ? ` (${lim})` : '');
}

function phaseLoad(l) {
  if (!l)
    return DASH;
  if (l.type === 'cpu')
    return `cpu × ${l.workers || 'all'} ${l.method || ''} ${l.duty != null && l.duty < 100 ? l.duty + ' %' : ''}`.trim();
  return l.type + (l.argv ? ` ${l.argv.join(' ')}` : l.size ? ` ${l.size}` : '');
}

const METRICS = [
  ['baseline_c', 'Baseline', degC], ['ambient_c', 'Ambient', degC], ['peak_c', 'Peak', degC],
  ['plateau_c', 'Plateau (95 %)', (x, m) => metricsPlateau(m)], ['rise_c', 'Rise', degC],
  ['rise_over_ambient_c', 'Rise over ambient', degC], ['tau_heat_s', 'τ heat', secs],
  ['t90_heat_s', 't90 heat', secs], ['tau_cool_s', 'τ cool', secs],
  ['t_back_to_baseline_s', 'Back to baseline', secs], ['throttled_fraction', 'Throttled', pct],
  ['freq_mean_hz', 'Mean MHz under load', mhz], ['freq_min_hz', 'Min MHz under load', mhz],
  ['work_rate_drop_pct', 'Work rate drop', x => x == null ? DASH : num(x, 1) + ' %'],
  ['fit_residual_c', 'Fit residual', degC],
];

function renderRun(r) {
  // the end of a run is worth its plot at once, not at the next throttled refresh
  const ended = st.run && st.run.id === r.id && st.run.state === 'running' && r.state !== 'running';
  st.run = r;
  const m = r.metrics || {}, q = (r.quality && r.quality.metrics) || {};
  $('#run-title').textContent = `Run ${runName(r)}`;
  document.title = `Run ${runName(r)} — heatcurve`;
  $('#run-state').textContent = `${runState(r)} · started ${when(r.created_ms)} UTC · sensor ${r.sensor || DASH}` +
    (r.live && r.state === 'running' ? ` · now ${degC(r.live.temp_c)}, predicted plateau ${plateau(
      r.live.predicted_plateau_c, r.live.predicted_plateau_low_c, r.live.predicted_plateau_high_c,
      riseSoFar(r.live.temp_c, m.baseline_c))}` : '') +
    (r.live && r.live.forecast && r.live.forecast.eta_s != null ? `, known in ${secs(r.live.forecast.eta_s)}` : '') +
    (r.repeat_of ? ` · run ${r.repeat_index} of ${r.repeat_count} of series ${r.repeat_of}` : '') +
    (r.repeat_waiting === 'remount' ? ': remount the case, then continue' :
      r.repeat_waiting ? ': the next starts back at the idle baseline' : '');
  $('#run-notes').textContent = r.notes || '';
  $('#run-notes').hidden = !r.notes;
  runQuality(r, q);
  const stop = $('#view-run .stop'), go = $('#view-run .continue');
  stop.hidden = r.state !== 'running' && r.state !== 'waiting' && !r.repeat_waiting;
  stop.dataset.run = r.id;
  go.hidden = r.repeat_waiting !== 'remount';
  go.dataset.run = r.id;
  $('#run-csv').href = `/api/v1/runs/${r.id}/samples?format=csv`;
  $('#run-csv').download = `run${r.id}.csv`;
  $('#run-json').href = `/api/v1/runs/${r.id}/samples`;
  $('#run-doc').href = `/api/v1/runs/${r.id}`;
  $('#run-metrics tbody').replaceChildren(...METRICS.map(([k, label, f]) => h('tr', { 'data-id': k },
    h('th', { scope: 'row' }, label), td(f(m[k], m) + (q[k] && q[k] !== 'ok' ? ` (${q[k]})` : ''), 'num'))));
  $('#run-phases tbody').replaceChildren(...(r.phases || []).map((p, i) => h('tr', null,
    td(String(i + 1)), td(p.kind), td(phaseEnds(p)), td(phaseLoad(p.load)), td(clock(p.started_ms)),
    td(clock(p.ended_ms)), td(p.end_reason || (i === r.phase_index && r.state === 'running' ? 'now' : DASH)))));
  const img = $('#run-plot');
  img.alt = `Plot of run ${runName(r)}: temperature with its phases and fits, CPU frequency and work rate`;
  runPlot.show(`/api/v1/runs/${r.id}/plot.svg?${plotSize(img, 400, 0.6)}`);
  if (ended)
    runPlot.load();
}

// A disturbed or uncertain run says so above everything else on its page.
function runQuality(r, q) {
  const phases = (r.quality && r.quality.phases) || [];
  const busy = (r.phases || []).map((p, i) => phases[i] && phases[i].disturbed ? `${p.kind} (phase ${i + 1})` : null)
    .filter(Boolean);
  const unsure = Object.keys(q).filter(k => q[k] === 'uncertain').length;
  const el = $('#run-quality');
  el.textContent = busy.length ? `Disturbed: other programs loaded the board during ${busy.join(', ')}; ` +
      'the metrics marked (disturbed) are not this case\'s alone.' :
    unsure ? `Uncertain: the fits do not pin down ${unsure} of the metrics, marked (uncertain); ` +
      'a longer or a repeated run will.' : '';
  el.hidden = !el.textContent;
}

// The run's plot too: drawn again at once for another run, throttled for the same one.
async function loadRun(id) {
  try {
    const r = await get(`/api/v1/runs/${id}`);
    if (st.view === 'run' && st.runId === id)
      renderRun(r);
  } catch (e) {
    showError(null, e);
  }
}

// Stop a run (or the series waiting after it); continue a series waiting for a remount.
async function stopRun(ev) {
  const btn = ev.currentTarget, what = btn.classList.contains('continue') ? 'continue' : 'stop';
  btn.disabled = true;
  try {
    await change('POST', `/api/v1/runs/${btn.dataset.run}/${what}`, undefined, null);
    showError(null, null);
  } catch (e) {
    showError(null, e);
  } finally {
    btn.disabled = false;
  }
  await loadRuns();
  if (st.view === 'run')
    loadRun(st.runId);
}

// --- compare ---

// The runs in the order given (the address, then as picked), as heatcurvectl takes them.
function compareFromHash() {
  const q = new URLSearchParams(location.hash.split('?')[1] || '');
  st.compare = [...new Set((q.get('runs') || '').split(',').filter(Boolean))];
  $('#rise').checked = q.get('y') === 'rise';
}

function renderCompareList() {
  if (!st.runs)
    return;     // not read yet: the choice in the address stays
  $('#compare-runs').replaceChildren(...st.runs.map(r => h('label', null,
    h('input', { type: 'checkbox', value: String(r.id), checked: st.compare.includes(String(r.id)) }),
    ` ${runName(r)} `, h('small', null, `${r.state}, ${regulated(r.metrics || {}, true) || 'plateau ' + metricsPlateau(r.metrics || {})}`))));
  updateCompare();
}

function updateCompare() {
  const on = [...document.querySelectorAll('#compare-runs input:checked')].map(i => i.value);
  const ids = st.compare.filter(id => on.includes(id)).concat(on.filter(id => !st.compare.includes(id)));
  const rise = $('#rise').checked;
  st.compare = ids;
  document.querySelectorAll('#compare-runs input').forEach(i => {
    i.disabled = !i.checked && ids.length >= COMPARE_MAX;
  });
  const q = ids.length ? `?runs=${ids.join(',')}` + (rise ? '&y=rise' : '') : '';
  history.replaceState(null, '', '#/compare' + q);
  $('#compare-hint').hidden = ids.length > 0;
  loadVerdicts(ids);
  const img = $('#compare-plot');
  if (!ids.length) {
    img.hidden = true;
    comparePlot.url = '';
    return;
  }
  img.alt = `Runs ${ids.join(', ')} compared: ${rise ? 'rise over ambient' : 'temperature'} against time since the load started`;
  comparePlot.show(`/api/v1/compare.svg?runs=${ids.join(',')}${rise ? '&y=rise' : ''}&${plotSize(img, 480, 0.6)}`);
}

// A group's metrics as heatcurvectl compare shows them: label, scale (0: a rate), decimals.
const GROUP_ROWS = {
  rise_over_ambient_c: ['Rise over ambient °C', 1, 1], rise_c: ['Rise over baseline °C (no ambient)', 1, 1],
  plateau_c: ['Plateau °C', 1, 1], tau_heat_s: ['τ heat s', 1, 0], t90_heat_s: ['t90 heat s', 1, 0],
  tau_cool_s: ['τ cool s', 1, 0], throttled_fraction: ['Throttled %', 100, 1],
  freq_mean_hz: ['Mean MHz under load', 1e-6, 0], work_rate_end: ['Work rate /s', 0, 0],
};

function rate(v) {     // 980, 1.2k, 3.4M
  let p = 0;
  for (; Math.abs(v) >= 999.95 && p < 5; p++)
    v /= 1000;
  return p ? num(v, 1) + ' kMGTP'[p] : num(v, 0);
}

// mean ± half its 95 % interval; "(n=2)" when fewer of its runs have it.
function groupCell(s, g, [, sc, d]) {
  if (!s || s.mean == null)
    return DASH;
  const f = x => sc ? num(x * sc, d) : rate(x);
  return f(s.mean) + (s.low != null && s.high != null ? ' ± ' + f((s.high - s.low) / 2) : '') +
    (s.n !== g.n ? ` (n=${s.n})` : '');
}

// The verdicts and groups as GET /api/v1/compare gives them: never worked out here.
let verdictsFor = '';
async function loadVerdicts(ids) {
  const key = verdictsFor = ids.join(',');
  let doc = {};
  try {
    if (key)
      doc = await get(`/api/v1/compare?runs=${key}&points=1`);
  } catch (e) {
    showError(null, e);
  }
  if (key !== verdictsFor)
    return;     // another choice since
  const gs = doc.groups || [], t = $('#groups');
  $('#verdicts').replaceChildren(...(doc.verdicts || []).map(v => h('p', { class: 'verdict' }, v.text)));
  t.hidden = !gs.length;
  const row = (head, cells) => h('tr', null, h('th', { scope: 'row' }, head), ...cells.map(c => td(c, 'num')));
  t.tHead.replaceChildren(row('Group', gs.map(g => g.label)), row('Runs', gs.map(g => String(g.n))));
  // rise over ambient: the rises first, no plateau temperatures (the plot shows rises too)
  const rise = $('#rise').checked, keys = Object.keys(gs.length ? gs[0].metrics : {});
  const shown = rise ? [...keys.filter(k => k.startsWith('rise')), ...keys.filter(k => !k.startsWith('rise') && k !== 'plateau_c')] : keys;
  t.tBodies[0].replaceChildren(...shown.map(k => {
    const how = GROUP_ROWS[k] || [k, 1, 2];
    return row(how[0], gs.map(g => groupCell(g.metrics[k], g, how)));
  }));
}

// --- start a run ---

const UNTIL_FOR = { stable: ['idle', 'stress', 'cooldown'], plateau: ['stress'], baseline: ['cooldown'] };

function syncPhase(li) {
  const f = name => li.querySelector(`[name=${name}]`);
  const kind = f('kind').value, end = f('end'), type = f('type').value;
  for (const o of end.options)
    o.disabled = o.hidden = o.value !== 'duration' && !UNTIL_FOR[o.value].includes(kind);
  if (end.selectedOptions[0].disabled)
    end.value = 'duration';
  const show = { duration: end.value === 'duration', until: end.value !== 'duration', load: kind === 'stress',
                 cpu: type === 'cpu', size: type !== 'cpu' };
  li.querySelectorAll('[data-for]').forEach(e => { e.hidden = !show[e.dataset.for]; });
}

function addPhase(p) {
  const li = $('#phase-tpl').content.firstElementChild.cloneNode(true);
  for (const [k, v] of Object.entries(p))
    li.querySelector(`[name=${k}]`).value = v;
  $('#phases').append(li);
  numberPhases();
  return li;
}

function numberPhases() {
  const all = document.querySelectorAll('#phases .phase');
  all.forEach((li, i) => {
    li.querySelector('legend').textContent = `Phase ${i + 1}`;
    li.querySelector('.remove').disabled = all.length === 1;
    syncPhase(li);
  });
  $('#add-phase').disabled = all.length >= 16;
}

function phaseBody(li) {
  const v = name => li.querySelector(`[name=${name}]`).value.trim();
  const p = { kind: v('kind') };
  if (v('end') === 'duration') {
    p.duration = v('duration');
  } else {
    p.until = v('end');
    if (v('min'))
      p.min = v('min');
    if (v('max'))
      p.max = v('max');
  }
  if (p.kind === 'stress') {
    const load = p.load = { type: v('type') };
    if (load.type === 'cpu') {
      load.method = v('method');
      if (v('workers'))
        load.workers = Number(v('workers'));
      if (v('duty'))
        load.duty = Number(v('duty'));
    } else if (v('size')) {
      load.size = v('size');
    }
  }
  return p;
}

async function submitRun(ev) {
  ev.preventDefault();
  const form = ev.currentTarget, errEl = $('.error', form), btn = $('button[type=submit]', form);
  const body = { phases: [...document.querySelectorAll('#phases .phase')].map(phaseBody) };
  if (form.label.value.trim())
    body.label = form.label.value.trim();
  if (form.notes.value.trim())
    body.notes = form.notes.value.trim();
  if (form.ambient_c.value.trim()) {
    body.ambient_c = Number(form.ambient_c.value);
    if (!isFinite(body.ambient_c) || form.ambient_c.validity.badInput) {
      showError(errEl, new Error('ambient: not a number of °C'));
      return;
    }
  }
  btn.disabled = true;
  showError(errEl, null);
  try {
    const run = await change('POST', '/api/v1/runs', body, errEl);
    await loadRuns();
    location.hash = `#/runs/${run.id}`;
  } catch (e) {
    showError(errEl, e);
  } finally {
    btn.disabled = false;
  }
}

// --- views ---

function route(focus) {
  const hash = location.hash.replace(/^#/, '') || '/';
  const m = /^\/runs\/(\d+)$/.exec(hash);
  const view = m ? 'run' : hash.startsWith('/compare') ? 'compare' : hash === '/new' ? 'new' : 'live';
  st.view = view;
  document.querySelectorAll('main > section').forEach(s => { s.hidden = s.dataset.view !== view; });
  document.querySelectorAll('nav a').forEach(a => {
    a.setAttribute('aria-current', a.dataset.view === view ? 'page' : 'false');
  });
  document.title = { live: 'heatcurve', compare: 'Compare runs — heatcurve', new: 'Start a run — heatcurve',
                     run: 'Run — heatcurve' }[view];
  if (view === 'live')
    chart.show(`/api/v1/history.svg?from=-15m&to=now&${plotSize($('#chart'), 360, 0.45)}`);
  if (view === 'run') {
    st.runId = Number(m[1]);
    if (!st.run || st.run.id !== st.runId) {
      $('#run-plot').hidden = true;
      $('#run-title').textContent = `Run #${st.runId}`;
    }
    loadRun(st.runId);
  }
  if (view === 'compare') {
    compareFromHash();
    renderCompareList();
  }
  if (focus)
    $(`#view-${view} h1`).focus();
}

async function loadStatus() {
  try {
    const s = await get('/api/v1/status');
    $('#board').textContent = [s.board && s.board.model, s.board && s.board.hostname,
                               s.simulator && 'simulated'].filter(Boolean).join(' · ');
    renderAlerts(s.active_alerts);
  } catch (e) {
    showError(null, e);
  }
}

async function loadSensors() {
  try {
    renderSensors(await get('/api/v1/sensors'));
    loadThrottled(true);
  } catch (e) {
    showError(null, e);
  }
}

function loadAll() {
  showError(null, null);
  loadStatus();
  loadSensors();
  loadRuns();
  route(false);
}

// --- server-sent events ---

function setLive(ok, text) {
  const el = $('#live');
  el.textContent = text;
  el.className = 'pill ' + (ok ? 'ok' : 'bad');
}

function parse(ev) {
  try {
    return JSON.parse(ev.data);
  } catch (e) {
    console.warn('heatcurve: an event that is not JSON', ev.type, ev.data);
    return null;
  }
}

function connectEvents() {
  const es = new EventSource('/api/v1/events');
  es.onopen = () => {
    if (st.missed)
      loadAll();      // what happened while disconnected came as no event
    st.missed = false;
    setLive(true, 'live');
  };
  es.onerror = () => {
    st.missed = true;
    if (es.readyState === EventSource.CLOSED) {
      setLive(false, 'live updates unavailable — Refresh reads again');
      setTimeout(connectEvents, RECONNECT_MS);
    } else {
      setLive(false, 'live updates unavailable — reconnecting…');
    }
  };
  es.addEventListener('sample', ev => {
    const doc = parse(ev);
    if (!doc)
      return;
    renderSensors(doc);
    loadThrottled(false);
    if (st.view === 'live')
      chart.refresh();
    if (st.view === 'run' && st.run && st.run.state === 'running')
      runRefresh();
  });
  const onRun = () => {
    loadRuns();
    if (st.view === 'run')
      loadRun(st.runId);
  };
  es.addEventListener('run', onRun);
  es.addEventListener('phase', onRun);
  es.addEventListener('alert', ev => {
    const doc = parse(ev);
    if (doc)
      renderAlerts(doc.active);
  });
}

// The open run's numbers follow its samples, no more often than its plot.
let runTimer = 0;
function runRefresh() {
  if (runTimer)
    return;
  runTimer = setTimeout(() => {
    runTimer = 0;
    if (st.view === 'run')
      loadRun(st.runId);
  }, PLOT_MIN_MS);
}

// --- start ---

// Each cell names its column: on a phone a row of these tables is a card of label-value lines.
function labelCells(table) {
  const heads = [...table.tHead.rows[0].cells].map(c => c.textContent);
  for (const row of table.tBodies[0].rows)
    [...row.cells].forEach((c, i) => { c.dataset.label = heads[i] || ''; });
}

function init() {
  const cards = new MutationObserver(ms => ms.forEach(m => labelCells(m.target.closest('table'))));
  document.querySelectorAll('table.stack').forEach(t => cards.observe(t.tBodies[0], { childList: true }));
  $('#auth').addEventListener('submit', ev => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, ev.currentTarget.token.value.trim());
    if (authDone)
      authDone(true);
  });
  $('#auth-cancel').addEventListener('click', () => authDone && authDone(false));
  $('#refresh').addEventListener('click', loadAll);
  document.querySelectorAll('.stop, .continue').forEach(b => b.addEventListener('click', stopRun));
  $('#compare-runs').addEventListener('change', updateCompare);
  $('#rise').addEventListener('change', updateCompare);
  $('#run-form').addEventListener('submit', submitRun);
  $('#phases').addEventListener('change', ev => syncPhase(ev.target.closest('.phase')));
  $('#phases').addEventListener('click', ev => {
    if (ev.target.classList.contains('remove')) {
      ev.target.closest('.phase').remove();
      numberPhases();
    }
  });
  $('#add-phase').addEventListener('click', () => addPhase({ kind: 'idle', duration: '1m' }).querySelector('select').focus());
  addPhase({ kind: 'idle', end: 'stable', max: '30m' });
  addPhase({ kind: 'stress', end: 'plateau', min: '5m', max: '90m' });
  addPhase({ kind: 'cooldown', end: 'baseline', max: '30m' });
  window.addEventListener('hashchange', () => route(true));
  DARK.addEventListener('change', () => route(false));
  loadAll();
  // ?live=0: read once, no event stream, so the page finishes loading (for
  // screenshots: headless Chromium's --virtual-time-budget waits for it)
  if (new URLSearchParams(location.search).get('live') === '0')
    setLive(false, 'not live (live=0) — Refresh reads again');
  else
    connectEvents();
}

init();
})();
