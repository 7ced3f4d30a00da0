// skyslurm dashboard: a small single-page app served by skyslurmd.
//
// Shape: one object per view (Clusters, Jobs, Job, Explain), each with
// enter(arg) / leave(). A view builds its DOM once in enter() and its pollers
// then only patch text and attributes, so a poll every 2 s stays cheap with
// 100 clusters or a 10,000-job table (which the server pages for us).
'use strict';

(function () {
  const POLL_MS = 2000;
  const HISTORY_MS = 30000;   // the GPU history changes per minute, not per poll
  const COST_MS = 30000;      // the bill is read from the cluster: ask rarely
  const HISTORY_HOURS = 6;
  const PAGE_SIZE = 50;
  const LOG_MAX_CHARS = 2000000;  // keep the log <pre> from growing without bound
  const FINAL_STATES = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT',
    'NODE_FAIL', 'PREEMPTED', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE', 'GONE']);
  const SVG_NS = 'http://www.w3.org/2000/svg';

  const viewRoot = document.getElementById('view');
  let sessionExpired = false;

  // ---------------------------------------------------------------- DOM helpers

  // el('a', {href: '#', class: 'x', onclick: fn}, 'text', child, [more]) ->
  // element. Tags written 'svg:…' are created in the SVG namespace.
  function el(tag, attrs, ...children) {
    const svg = tag.startsWith('svg:');
    const node = svg ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else if (name === 'text') node.textContent = value;
      else if (name === 'class') node.setAttribute('class', value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.append(child instanceof Node ? child : String(child));
    }
  }

  // Writes only when the value differs: untouched nodes keep text selection
  // and cost no layout.
  function setText(node, text) {
    text = String(text);
    if (node.textContent !== text) node.textContent = text;
  }

  function setAttr(node, name, value) {
    if (value === null || value === undefined || value === false) {
      if (node.hasAttribute(name)) node.removeAttribute(name);
      return;
    }
    value = value === true ? '' : String(value);
    if (node.getAttribute(name) !== value) node.setAttribute(name, value);
  }

  function setClass(node, value) { setAttr(node, 'class', value); }

  // Keeps parent's children equal to one node per item, in items' order,
  // reusing cached entries ({root, ...}) by key and moving only what moved.
  // parent must hold nothing else.
  function syncList(parent, cache, items, keyOf, create, update) {
    const keys = new Set();
    const wanted = [];
    for (const item of items) {
      const key = keyOf(item);
      if (keys.has(key)) continue;  // a duplicate key would fight for one node
      keys.add(key);
      wanted.push([key, item]);
    }
    for (const [key, entry] of cache) {
      if (!keys.has(key)) { entry.root.remove(); cache.delete(key); }
    }
    let cursor = parent.firstChild;
    for (const [key, item] of wanted) {
      let entry = cache.get(key);
      if (!entry) { entry = create(item, key); cache.set(key, entry); }
      update(entry, item);
      if (entry.root === cursor) cursor = cursor.nextSibling;
      else parent.insertBefore(entry.root, cursor);
    }
  }

  // ----------------------------------------------------------------- formatting

  const pad2 = (n) => String(n).padStart(2, '0');

  // Local HH:MM:SS today, otherwise YYYY-MM-DD HH:MM:SS.
  function fmtTime(t) {
    if (!t) return '—';
    const d = new Date(t * 1000);
    const hms = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
    if (d.toDateString() === new Date().toDateString()) return hms;
    return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${hms}`;
  }

  function isoTime(t) { return t ? new Date(t * 1000).toISOString() : null; }

  // 45s, 3m 20s, 2h 5m, 1d 3h: the two largest units are enough to read.
  function fmtDuration(seconds) {
    let s = Math.max(0, Math.floor(Number(seconds) || 0));
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
    if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
    return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
  }

  const nowSeconds = () => Date.now() / 1000;
  const num = (v) => Number(v) || 0;

  // Short Slurm-style codes for per-state task counts of an array.
  const STATE_CODES = {
    PENDING: 'PD', RUNNING: 'R', COMPLETED: 'CD', COMPLETING: 'CG', FAILED: 'F',
    CANCELLED: 'CA', TIMEOUT: 'TO', NODE_FAIL: 'NF', PREEMPTED: 'PR', SUSPENDED: 'S',
    OUT_OF_MEMORY: 'OOM', BOOT_FAIL: 'BF', DEADLINE: 'DL', CONFIGURING: 'CF',
    REQUEUED: 'RQ', GONE: 'GONE',
  };

  function fmtTasks(tasks) {
    return Object.entries(tasks).filter(([, n]) => n > 0)
      .map(([state, n]) => `${n} ${STATE_CODES[state] || state}`).join(' · ');
  }

  // Badge colour family per job state.
  function stateTone(state) {
    switch (state) {
      case 'PENDING': case 'REQUEUED': case 'SUSPENDED': return 'pending';
      case 'RUNNING': case 'COMPLETING': case 'CONFIGURING': return 'running';
      case 'COMPLETED': return 'done';
      case 'FAILED': case 'TIMEOUT': case 'NODE_FAIL': case 'OUT_OF_MEMORY':
      case 'BOOT_FAIL': case 'DEADLINE': return 'failed';
      case 'CANCELLED': case 'PREEMPTED': case 'GONE': return 'gone';
      default: return 'neutral';
    }
  }

  function updateBadge(node, state, label) {
    setText(node, label || state || '—');
    setClass(node, `badge state state-${stateTone(state)}`);
    setAttr(node, 'data-state', state || '');
    setAttr(node, 'title', label && label !== state ? state : null);
  }

  function fmtMoney(amount, currency) {
    const n = num(amount);
    try { return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency || 'USD' }).format(n); }
    catch (e) { return `${n.toFixed(2)} ${currency}`; }  // not an ISO currency code
  }

  // Splits extra sbatch options on blanks, keeping "…" and '…' groups
  // together (and dropping their quotes), as a shell would: --comment="a b".
  function splitArgs(text) {
    return (text.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) || [])
      .map((word) => word.replace(/"([^"]*)"|'([^']*)'/g, (m, dq, sq) => (dq !== undefined ? dq : sq)));
  }

  // ----------------------------------------------------------------------- HTTP

  class HttpError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  // The session's second secret. The login sends the browser here with it in
  // the address's fragment (never sent to a server); it is kept in this
  // origin's storage (scheme, host and port: a page on another port of the
  // same host cannot read it, though it could get the cookie) and goes with
  // every API request as a header, which the daemon requires.
  const SECRET_KEY = 'skyslurm-session-secret';
  function takeLoginSecret() {
    const m = /^#login=([0-9a-f]+)$/.exec(location.hash);
    if (!m) return;
    try { localStorage.setItem(SECRET_KEY, m[1]); } catch (e) { /* storage off: this tab only */ }
    sessionSecret = m[1];
    history.replaceState(null, '', '/#/clusters');
  }
  let sessionSecret = null;
  function csrfToken() {
    if (sessionSecret) return sessionSecret;
    try { return localStorage.getItem(SECRET_KEY) || ''; } catch (e) { return ''; }
  }

  async function api(path, { method = 'GET', body, signal } = {}) {
    const headers = { Accept: 'application/json', 'X-Skyslurm-Csrf': csrfToken() };
    const init = { method, headers, credentials: 'same-origin', cache: 'no-store', signal };
    if (method !== 'GET') {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body === undefined ? {} : body);
    }
    const res = await fetch(path, init).catch((e) => {
      throw e && e.name === 'AbortError' ? e : new HttpError(0, 'Cannot reach skyslurmd (is it still running?)');
    });
    let data = null;
    try { data = JSON.parse(await res.text()); } catch (e) { data = null; }
    if (!res.ok) {
      throw new HttpError(res.status, (data && typeof data.error === 'string' && data.error) ||
        `HTTP ${res.status} ${res.statusText}`.trim());
    }
    if (data === null || typeof data !== 'object') throw new HttpError(res.status, 'The server answered something that is not JSON');
    return data;
  }

  const jobPath = (id, rest = '') => `/v1/jobs/${encodeURIComponent(id)}${rest}`;

  function markUpdated() {
    setText(document.getElementById('updated'), `updated ${fmtTime(nowSeconds())}`);
  }

  // A 403 means the session cookie is gone: nothing will work until the user
  // opens the printed URL again, so stop everything rather than poll on.
  function expireSession() {
    if (sessionExpired) return;
    sessionExpired = true;
    if (current) current.ctx.close();
    const banner = document.getElementById('session-error');
    banner.textContent = '';
    append(banner, ['Session expired: open the URL printed by ', el('code', { text: 'skyslurm dashboard' }), ' again.']);
    banner.hidden = false;
  }

  // Re-runs fn every ms after the previous run finished (never overlapping).
  // kick() runs it now; a kick during a run queues one more run right after.
  class Poller {
    constructor(ctx, fn, ms, source) {
      Object.assign(this, { ctx, fn, ms, source, timer: 0, running: false, again: false, stopped: false });
    }
    async tick() {
      if (this.stopped || !this.ctx.alive) return;
      if (this.running) { this.again = true; return; }
      clearTimeout(this.timer);
      this.running = true;
      try { await this.fn(); } catch (e) { this.ctx.fail(e, this.source); }
      this.running = false;
      if (this.stopped || !this.ctx.alive) return;
      if (this.again) { this.again = false; this.tick(); return; }
      this.timer = setTimeout(() => this.tick(), this.ms);
    }
    kick() { this.tick(); }
    stop() { this.stopped = true; clearTimeout(this.timer); }
  }

  // Everything a view starts while shown: requests (aborted on leave),
  // pollers and timers (stopped on leave), and its error line.
  class ViewContext {
    constructor() {
      this.alive = true;
      this.abort = new AbortController();
      this.cleanups = [];
      this.errorEl = el('p', { class: 'error', role: 'status', 'aria-live': 'polite', hidden: true });
      this.errorSource = null;
    }
    get(path) { return api(path, { signal: this.abort.signal }); }
    post(path, body) { return api(path, { method: 'POST', body, signal: this.abort.signal }); }
    poll(fn, ms, source = 'poll') {
      const p = new Poller(this, fn, ms, source);
      this.cleanups.push(() => p.stop());
      if (!sessionExpired) p.tick();
      return p;
    }
    timeout(fn, ms) {
      const id = setTimeout(() => { if (this.alive) fn(); }, ms);
      this.cleanups.push(() => clearTimeout(id));
      return id;
    }
    // source names which request failed, so that another request's success
    // does not hide the message.
    fail(err, source = 'poll') {
      if (!this.alive || (err && err.name === 'AbortError')) return;
      if (err instanceof HttpError && err.status === 403) { expireSession(); return; }
      this.errorSource = source;
      setText(this.errorEl, err && err.message ? err.message : String(err));
      this.errorEl.hidden = false;
    }
    ok(source = 'poll') {
      if (!this.alive) return;
      markUpdated();
      if (this.errorSource === source) { this.errorSource = null; this.errorEl.hidden = true; }
    }
    close() {
      if (!this.alive) return;
      this.alive = false;
      this.abort.abort();
      for (const f of this.cleanups) f();
      this.cleanups = [];
    }
  }

  // ------------------------------------------------------------- Clusters view

  const NODE_STATES = ['idle', 'mixed', 'allocated', 'down', 'drained', 'powered_down'];

  const ClustersView = {
    title: 'Clusters',
    enter(ctx) {
      this.ctx = ctx;
      this.cards = new Map();
      this.history = null;
      this.summary = el('p', { class: 'muted view-sub' });
      this.grid = el('div', { class: 'cards' });
      this.empty = el('p', { class: 'muted', hidden: true, text: 'No clusters are configured.' });
      viewRoot.append(el('div', { class: 'view-head' }, el('h1', { text: 'Clusters' }), this.summary),
        ctx.errorEl, this.empty, this.grid);
      ctx.poll(() => this.refresh(), POLL_MS);
      ctx.poll(() => this.refreshHistory(), HISTORY_MS, 'history');
    },
    leave() { this.cards = null; },

    async refresh() {
      const data = await this.ctx.get('/v1/clusters');
      if (!this.ctx.alive) return;
      const clusters = Array.isArray(data.clusters) ? data.clusters : [];
      syncList(this.grid, this.cards, clusters, (c) => c.name,
        (c) => this.createCard(c), (card, c) => this.updateCard(card, c));
      this.empty.hidden = clusters.length > 0;
      // The server counts each GPU once (partitions may share nodes).
      let free = 0, total = 0, up = 0;
      for (const c of clusters) {
        free += num(c.free_gpus); total += num(c.total_gpus);
        if (c.reachable) up++;
      }
      setText(this.summary, `${clusters.length} cluster${clusters.length === 1 ? '' : 's'} · ` +
        `${up} reachable · ${free} of ${total} GPUs free`);
      this.ctx.ok();
    },

    async refreshHistory() {
      const data = await this.ctx.get(`/v1/gpu-history?hours=${HISTORY_HOURS}`);
      if (!this.ctx.alive) return;
      this.history = data.samples || {};
      // One window for every card (charts side by side compare): from the
      // oldest sample (a daemon up for minutes has minutes of them) to the
      // newest, at most HISTORY_HOURS.
      let oldest = Infinity, newest = 0;
      for (const samples of Object.values(this.history)) {
        if (!Array.isArray(samples) || !samples.length) continue;
        oldest = Math.min(oldest, num(samples[0][0]));
        newest = Math.max(newest, num(samples[samples.length - 1][0]));
      }
      this.window = !newest ? null
        : { end: newest, span: newest > oldest ? Math.min(HISTORY_HOURS * 3600, newest - oldest) : 60 };
      for (const [name, card] of this.cards) this.drawChart(card, this.history[name]);
      this.ctx.ok('history');
    },

    createCard(c) {
      const card = {};
      card.name = el('h2', { class: 'card-title', text: c.name });
      card.kind = el('span', { class: 'badge kind' });
      card.home = el('span', { class: 'badge home', text: 'home', hidden: true });
      card.reach = el('p', { class: 'reach' });
      card.free = el('span', { class: 'free-gpus' });
      card.total = el('span', { class: 'total-gpus' });
      card.gpuRows = new Map();
      card.gpuBody = el('tbody');
      card.noGpus = el('p', { class: 'muted small', text: 'No GPUs.', hidden: true });
      card.gpuWrap = el('div', { class: 'table-wrap' },
        el('table', { class: 'gpu-table' },
          el('caption', { class: 'visually-hidden', text: `GPUs of ${c.name} by type and partition` }),
          el('thead', {}, el('tr', {},
            el('th', { scope: 'col', text: 'type' }), el('th', { scope: 'col', class: 'n', text: 'total' }),
            el('th', { scope: 'col', class: 'n', text: 'free' }), el('th', { scope: 'col', class: 'n', text: 'pending' }))),
          card.gpuBody));
      card.chips = el('ul', { class: 'chips', 'aria-label': 'nodes by state' });
      card.chipItems = new Map();
      card.parts = el('ul', { class: 'partitions' });
      card.partItems = new Map();
      card.elastic = el('p', { class: 'elastic small', hidden: true });
      card.busyLine = el('svg:polyline', { class: 'busy', 'vector-effect': 'non-scaling-stroke', points: '' });
      card.freeLine = el('svg:polyline', { class: 'free', 'vector-effect': 'non-scaling-stroke', points: '' });
      card.chartNote = el('span', { class: 'muted', text: 'loading history…' });
      card.root = el('section', { class: 'cluster-card card', 'data-cluster': c.name, 'aria-label': `cluster ${c.name}` },
        el('header', { class: 'card-head' }, card.name, el('span', { class: 'badges' }, card.kind, card.home)),
        card.reach,
        el('p', { class: 'gpu-summary' }, card.free, el('span', { class: 'muted', text: ' free of ' }), card.total,
          el('span', { class: 'muted', text: ' GPUs' })),
        card.gpuWrap, card.noGpus,
        el('h3', { class: 'mini', text: 'Nodes' }), card.chips,
        el('h3', { class: 'mini', text: 'Partitions' }), card.parts,
        card.elastic,
        el('figure', { class: 'chart' },
          el('svg:svg', { class: 'gpu-chart', viewBox: '0 0 360 80', preserveAspectRatio: 'none', role: 'img',
            'aria-label': `GPUs busy and free on ${c.name} over the last ${HISTORY_HOURS} hours` },
          el('svg:line', { class: 'axis', x1: 0, y1: 79.5, x2: 360, y2: 79.5, 'vector-effect': 'non-scaling-stroke' }),
          card.busyLine, card.freeLine),
          el('figcaption', { class: 'legend' },
            el('span', { class: 'key key-busy' }), 'busy ', el('span', { class: 'key key-free' }), 'free ',
            card.chartNote)));
      if (this.history) this.drawChart(card, this.history[c.name]);
      return card;
    },

    updateCard(card, c) {
      setText(card.kind, c.kind || 'slurm');
      setClass(card.kind, `badge kind kind-${c.kind || 'slurm'}`);
      card.home.hidden = !c.home;
      setAttr(card.root, 'data-reachable', c.reachable ? 'true' : 'false');

      // Reachability: since when, and the reason when not.
      let reach = c.reachable ? 'reachable' : 'unreachable';
      if (c.since) reach += ` since ${fmtTime(c.since)}`;
      if (!c.reachable && c.error) reach += `: ${c.error}`;
      setText(card.reach, reach);
      setClass(card.reach, `reach ${c.reachable ? 'reachable' : 'unreachable'}`);
      setAttr(card.reach, 'title', c.answered ? `last answer ${fmtTime(c.answered)}` : null);

      this.updateGpus(card, c);

      const nodes = c.nodes || {};
      let nodeStates = NODE_STATES.filter((s) => nodes[s])
        .concat(Object.keys(nodes).filter((s) => nodes[s] && !NODE_STATES.includes(s)));
      if (!nodeStates.length) nodeStates = [''];  // '' stands for "nothing reported"
      syncList(card.chips, card.chipItems, nodeStates, (s) => s,
        (s) => ({ root: el('li', { class: s ? `chip node-${s}` : 'chip' }) }),
        (chip, s) => setText(chip.root, s ? `${s.replace('_', ' ')} ${nodes[s]}` : 'no nodes reported'));

      syncList(card.parts, card.partItems, c.partitions || [], (p) => p.name,
        (p) => ({ root: el('li', {}) }),
        (item, p) => {
          const bits = [`${p.nodes || 0} node${p.nodes === 1 ? '' : 's'}`];
          if (p.gpus) bits.push(`${p.gpus} GPUs`);
          if (p.state && p.state !== 'UP') bits.push(p.state);
          setText(item.root, `${p.name}${p.default ? ' (default)' : ''} · ${bits.join(' · ')}`);
          setClass(item.root, p.state && p.state !== 'UP' ? 'part-down' : null);
        });

      card.elastic.hidden = c.kind !== 'elastic';
      if (c.kind === 'elastic') {
        const e = c.elastic || {};
        const bits = [`boots in ${fmtDuration(e.boot_seconds)}`];
        if (e.price_per_gpu_hour !== undefined && e.price_per_gpu_hour !== null) {
          bits.push(`${fmtMoney(e.price_per_gpu_hour, e.currency)} per GPU-hour`);
        }
        const boot = (c.gpus || []).reduce((n, g) => n + num(g.can_boot), 0);
        if (boot) bits.push(`${boot} more GPUs can boot`);
        setText(card.elastic, `Elastic: ${bits.join(' · ')}`);
      }
    },

    // One summary row per GPU type, then one indented row per partition
    // holding that type.
    // The type rows are the server's (each GPU once: partitions may share
    // nodes), the partition rows under them each partition's own.
    updateGpus(card, c) {
      const byType = new Map();
      for (const t of c.gpu_types || []) {
        byType.set(t.type, { type: t.type, total: num(t.total), free: num(t.free), pending: num(t.pending), parts: [] });
      }
      for (const g of c.gpus || []) {
        const type = g.canonical || g.type || 'GPU';
        if (!byType.has(type)) byType.set(type, { type, total: 0, free: 0, pending: 0, parts: [] });
        byType.get(type).parts.push({ type, partition: g.partition || '—', total: num(g.total), free: num(g.free), pending: num(g.pending_demand) });
      }
      const rows = [];
      for (const t of byType.values()) {
        rows.push({ key: `t:${t.type}`, label: t.type, sum: true, ...t });
        for (const p of t.parts) rows.push({ key: `p:${t.type}/${p.partition}`, label: p.partition, sum: false, ...p });
      }
      setText(card.free, num(c.free_gpus));
      setText(card.total, num(c.total_gpus));
      card.gpuWrap.hidden = rows.length === 0;
      card.noGpus.hidden = rows.length > 0;
      syncList(card.gpuBody, card.gpuRows, rows, (r) => r.key,
        (r) => {
          const cells = [el('th', { scope: 'row' }), el('td', { class: 'n' }), el('td', { class: 'n' }), el('td', { class: 'n' })];
          return { root: el('tr', { class: r.sum ? 'gpu-type' : 'gpu-part' }, cells), cells };
        },
        (row, r) => {
          setText(row.cells[0], r.sum ? r.label : `↳ ${r.label}`);
          setText(row.cells[1], r.total);
          setText(row.cells[2], r.free);
          setText(row.cells[3], r.pending);
        });
    },

    drawChart(card, samples) {
      samples = Array.isArray(samples) ? samples : [];
      if (!samples.length) {
        setAttr(card.busyLine, 'points', '');
        setAttr(card.freeLine, 'points', '');
        setText(card.chartNote, `· no samples in the last ${HISTORY_HOURS} h`);
        return;
      }
      const end = this.window ? this.window.end : Math.max(samples[samples.length - 1][0], 1);
      const span = this.window ? this.window.span : HISTORY_HOURS * 3600;
      const start = end - span;
      let max = 1;
      for (const s of samples) max = Math.max(max, num(s[1]) + num(s[2]), num(s[1]), num(s[2]));
      const pt = (t, v) => `${((t - start) / span * 360).toFixed(1)},${(78 - (num(v) / max) * 74).toFixed(1)}`;
      const visible = samples.filter((s) => s[0] >= start);
      setAttr(card.busyLine, 'points', visible.map((s) => pt(s[0], s[1])).join(' '));
      setAttr(card.freeLine, 'points', visible.map((s) => pt(s[0], s[2])).join(' '));
      const last = samples[samples.length - 1];
      setText(card.chartNote, `· last ${fmtDuration(span)} · now ${num(last[1])} busy, ${num(last[2])} free`);
    },
  };

  // ----------------------------------------------------------------- Jobs view

  const JOB_COLUMNS = [
    { key: 'id', label: 'ID', sort: 'id' },
    { key: 'name', label: 'Name', sort: 'name' },
    { key: 'user', label: 'User' },
    { key: 'cluster', label: 'Cluster', sort: 'cluster' },
    { key: 'state', label: 'State', sort: 'state' },
    { key: 'gpus', label: 'GPUs', sort: 'gpus', num: true },
    { key: 'wait', label: 'Wait', sort: 'wait', num: true },
    { key: 'reason', label: 'Reason', sort: 'reason' },
  ];

  const JobsView = {
    title: 'Jobs',
    // Kept across visits so that coming back from one job finds the same page.
    query: { offset: 0, sort: 'wait', order: 'desc', state: '', cluster: '', q: '' },

    enter(ctx) {
      this.ctx = ctx;
      this.rows = new Map();
      this.optionSig = { state: null, cluster: null };
      const q = this.query;
      this.stateSel = el('select', { id: 'filter-state', onchange: () => this.setFilter('state', this.stateSel.value) },
        el('option', { value: '', text: 'All states' }));
      this.clusterSel = el('select', { id: 'filter-cluster', onchange: () => this.setFilter('cluster', this.clusterSel.value) },
        el('option', { value: '', text: 'All clusters' }));
      this.search = el('input', { id: 'filter-q', type: 'search', placeholder: 'Filter by name, id, reason',
        autocomplete: 'off', spellcheck: 'false', value: q.q, oninput: () => this.debounceSearch() });
      this.headers = new Map();
      const headRow = el('tr', {});
      for (const col of JOB_COLUMNS) {
        const th = el('th', { scope: 'col', class: `col-${col.key}${col.num ? ' n' : ''}` });
        if (col.sort) {
          const arrow = el('span', { class: 'arrow', 'aria-hidden': 'true' });
          th.append(el('button', { type: 'button', class: 'sort' }, col.label, arrow));
          th.addEventListener('click', () => this.sortBy(col.sort));
          this.headers.set(col.sort, { th, arrow });
        } else {
          th.textContent = col.label;
        }
        headRow.append(th);
      }
      this.tbody = el('tbody');
      this.emptyNote = el('p', { class: 'muted', hidden: true, text: 'No jobs match.' });
      this.prev = el('button', { type: 'button', id: 'page-prev', onclick: () => this.page(-1) }, '‹ Prev');
      this.next = el('button', { type: 'button', id: 'page-next', onclick: () => this.page(1) }, 'Next ›');
      this.info = el('span', { id: 'page-info', 'aria-live': 'polite' }, '…');
      viewRoot.append(
        el('div', { class: 'view-head' }, el('h1', { text: 'Jobs' })),
        el('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
          el('label', {}, el('span', { text: 'State' }), this.stateSel),
          el('label', {}, el('span', { text: 'Cluster' }), this.clusterSel),
          el('label', { class: 'grow' }, el('span', { text: 'Search' }), this.search)),
        ctx.errorEl,
        el('div', { class: 'table-wrap card flush' },
          el('table', { id: 'jobs-table', class: 'data' }, el('thead', {}, headRow), this.tbody)),
        this.emptyNote,
        el('nav', { class: 'pager', 'aria-label': 'pages' }, this.prev, this.info, this.next));
      this.updateSortArrows();
      this.poller = ctx.poll(() => this.refresh(), POLL_MS);
    },
    leave() { this.rows = null; },

    queryString() {
      const q = this.query;
      return new URLSearchParams({ offset: q.offset, limit: PAGE_SIZE, sort: q.sort, order: q.order,
        state: q.state, cluster: q.cluster, q: q.q }).toString();
    },

    async refresh() {
      const asked = this.queryString();
      const data = await this.ctx.get(`/v1/table?${asked}`);
      // The filters changed while this was in flight: its rows are stale and
      // the poller already queued a fetch for the new query.
      if (!this.ctx.alive || asked !== this.queryString()) return;
      const total = num(data.total);
      if (this.query.offset > 0 && this.query.offset >= total) {
        // The page emptied under us (jobs left): go to the last page there is.
        this.query.offset = Math.max(0, Math.floor((total - 1) / PAGE_SIZE) * PAGE_SIZE);
        this.poller.kick();
        return;
      }
      this.updateOptions(this.stateSel, 'state', Object.entries(data.states || {}),
        ([s, n]) => [s, `${s} (${n})`], this.query.state);
      this.updateOptions(this.clusterSel, 'cluster', (data.clusters || []).map((c) => [c]),
        ([c]) => [c, c], this.query.cluster);
      const rows = Array.isArray(data.rows) ? data.rows : [];
      syncList(this.tbody, this.rows, rows, (r) => r.key, (r) => this.createRow(r), (row, r) => this.updateRow(row, r));
      this.emptyNote.hidden = rows.length > 0;
      const from = total ? this.query.offset + 1 : 0;
      const to = Math.min(this.query.offset + rows.length, total);
      setText(this.info, `${from}–${to} of ${total} (${num(data.all)} jobs)`);
      this.prev.disabled = this.query.offset <= 0;
      this.next.disabled = this.query.offset + PAGE_SIZE >= total;
      this.ctx.ok();
    },

    // Rebuilds a <select>'s options only when their set or labels changed,
    // keeping the chosen value even when it has no rows right now.
    updateOptions(select, which, entries, toOption, chosen) {
      const options = entries.map(toOption);
      if (chosen && !options.some(([v]) => v === chosen)) options.push([chosen, `${chosen} (0)`]);
      const sig = JSON.stringify(options);
      if (sig === this.optionSig[which]) return;
      this.optionSig[which] = sig;
      while (select.options.length > 1) select.remove(1);
      for (const [value, label] of options) select.append(el('option', { value, text: label }));
      select.value = chosen;
    },

    createRow(r) {
      const c = {};
      c.link = el('a', { class: 'job-link' });
      c.sky = el('div', { class: 'sky-id small muted' });
      c.name = el('td', { class: 'col-name' });
      c.user = el('td', { class: 'col-user' });
      c.cluster = el('td', { class: 'col-cluster' });
      c.badge = el('span', { class: 'badge state' });
      c.gpus = el('td', { class: 'col-gpus n' });
      c.wait = el('td', { class: 'col-wait n' });
      c.reason = el('td', { class: 'col-reason' });
      c.root = el('tr', { 'data-key': r.key },
        el('td', { class: 'col-id' }, c.link, c.sky), c.name, c.user, c.cluster,
        el('td', { class: 'col-state' }, c.badge), c.gpus, c.wait, c.reason);
      return c;
    },

    updateRow(c, r) {
      setText(c.link, r.job_id || r.native_id || r.key);
      // Only a sky job has a page (its history is skyslurmd's); another job
      // of yours is a row, not a link.
      setAttr(c.link, 'href', r.sky_id ? `#/job/${encodeURIComponent(r.sky_id)}` : null);
      setText(c.sky, r.sky_id || '');
      c.sky.hidden = !r.sky_id;
      setText(c.name, r.name || '');
      setText(c.user, r.user || '');
      setText(c.cluster, r.cluster || '—');
      const tasks = r.tasks && typeof r.tasks === 'object' ? fmtTasks(r.tasks) : '';
      updateBadge(c.badge, r.state, tasks || r.state);
      setText(c.gpus, r.gres || (r.gpus ? r.gpus : '—'));
      setText(c.wait, fmtDuration(r.wait));
      setAttr(c.wait, 'title', r.since ? `since ${fmtTime(r.since)}` : null);
      setText(c.reason, r.reason || '');
    },

    setFilter(which, value) {
      if (this.query[which] === value) return;
      this.query[which] = value;
      this.query.offset = 0;
      this.poller.kick();
    },

    debounceSearch() {
      clearTimeout(this.searchTimer);
      this.searchTimer = this.ctx.timeout(() => this.setFilter('q', this.search.value.trim()), 250);
    },

    sortBy(key) {
      const q = this.query;
      if (q.sort === key) q.order = q.order === 'asc' ? 'desc' : 'asc';
      else { q.sort = key; q.order = key === 'wait' || key === 'gpus' ? 'desc' : 'asc'; }
      q.offset = 0;
      this.updateSortArrows();
      this.poller.kick();
    },

    updateSortArrows() {
      for (const [key, h] of this.headers) {
        const on = key === this.query.sort;
        setText(h.arrow, on ? (this.query.order === 'asc' ? '▲' : '▼') : '');
        setAttr(h.th, 'aria-sort', on ? (this.query.order === 'asc' ? 'ascending' : 'descending') : null);
      }
    },

    page(delta) {
      this.query.offset = Math.max(0, this.query.offset + delta * PAGE_SIZE);
      this.poller.kick();
    },
  };

  // ------------------------------------------------------------------ Job view

  const JobView = {
    title: 'Job',
    enter(ctx, id) {
      this.ctx = ctx;
      this.id = id;
      this.lastCost = 0;
      this.events = { count: 0, lastSig: '' };
      this.copies = new Map();
      this.log = { offset: 0, chars: 0, finalSeen: false };
      this.state = '';
      this.confirmTimer = 0;
      this.acting = false;

      const f = (this.f = {});
      f.name = el('span', { class: 'job-name' }, id);
      f.skyId = el('small', { class: 'sky-id' });
      f.title = el('h1', { id: 'job-title' }, f.name, ' ', f.skyId);
      f.state = el('span', { id: 'job-state', class: 'badge state' }, '…');
      f.where = el('span', { id: 'job-where' }, '…');
      const facts = [el('div', { class: 'fact' }, el('dt', { text: 'Where' }), el('dd', {}, f.where))];
      for (const [key, label] of [['reason', 'Reason'], ['activity', 'Activity'], ['submitted', 'Submitted'],
        ['wait', 'Waited'], ['ran', 'Ran'], ['moves', 'Restarts / moves'], ['exit', 'Exit code'], ['cost', 'Cost']]) {
        f[key] = el('span', { id: `job-${key}` }, '—');
        f[key + 'Row'] = el('div', { class: 'fact' }, el('dt', { text: label }), el('dd', {}, f[key]));
        facts.push(f[key + 'Row']);
      }
      f.waitLabel = f.waitRow.firstChild;
      f.cancel = el('button', { type: 'button', id: 'job-cancel', class: 'danger', disabled: true,
        onclick: () => this.cancelClicked() }, 'Cancel');
      f.move = el('button', { type: 'button', id: 'job-move', disabled: true, onclick: () => this.moveClicked() }, 'Move now');
      f.result = el('p', { id: 'job-action-result', class: 'action-result', 'aria-live': 'polite' });
      f.events = el('ol', { id: 'job-events', class: 'events' });
      f.explain = el('pre', { id: 'job-explain', class: 'mono-block' }, 'loading…');
      f.canRun = el('p', { class: 'verdict', hidden: true });
      f.copies = el('div', { class: 'copies' });
      f.log = el('pre', { id: 'job-log', class: 'mono-block log', tabindex: '0', 'aria-label': 'job output' });
      f.logState = el('p', { class: 'muted small', id: 'job-log-state' }, 'loading…');

      viewRoot.append(
        el('p', { class: 'crumbs' }, el('a', { href: '#/jobs', text: '← Jobs' })),
        el('div', { class: 'job-head' }, f.title, f.state),
        ctx.errorEl,
        el('section', { class: 'card job-facts', 'aria-label': 'job summary' },
          el('dl', { class: 'facts' }, facts),
          el('div', { class: 'actions' }, f.cancel, f.move), f.result),
        el('section', { class: 'card' }, el('h2', { text: 'Placement history' }), f.events),
        el('section', { class: 'card' }, el('h2', { text: 'Translation per cluster' }), f.canRun, f.explain, f.copies),
        el('section', { class: 'card' }, el('h2', { text: 'Log' }), f.logState, f.log));

      this.jobPoller = ctx.poll(() => this.refreshJob(), POLL_MS);
      this.logPoller = ctx.poll(() => this.refreshLog(), POLL_MS, 'log');
      this.loadExplain();
    },
    leave() { this.copies = null; },

    async refreshJob() {
      const withCost = Date.now() - this.lastCost >= COST_MS;
      const data = await this.ctx.get(jobPath(this.id, withCost ? '?cost=1' : ''));
      if (!this.ctx.alive) return;
      if (withCost) this.lastCost = Date.now();
      const j = data.job || {};
      const f = this.f;
      this.state = j.state || '';
      setText(f.name, j.name || j.sky_id || this.id);
      setText(f.skyId, j.name && j.sky_id ? j.sky_id : '');
      const title = `${j.name || j.sky_id || this.id} · skyslurm`;
      if (document.title !== title) document.title = title;
      updateBadge(f.state, j.state);
      let where = j.cluster ? `${j.cluster}:${j.native_id || '?'}` : 'not placed yet';
      if (j.job_id && String(j.job_id) !== '0') where += ` (job ${j.job_id})`;
      setText(f.where, where);
      setText(f.reason, j.reason || '—');
      setText(f.activity, data.activity || '—');
      f.activityRow.hidden = !data.activity;
      setText(f.submitted, fmtTime(j.submitted || j.created));
      const queued = j.submitted || j.created;
      const now = nowSeconds();
      setText(f.waitLabel, j.started || FINAL_STATES.has(j.state) ? 'Waited' : 'Waiting');
      setText(f.wait, queued ? fmtDuration((j.started || j.ended || now) - queued) : '—');
      setText(f.ran, j.started ? `${fmtDuration((j.ended || now) - j.started)} (since ${fmtTime(j.started)})` : '—');
      setText(f.moves, `${num(j.restarts)} / ${num(j.moves)}${j.managed ? ' · managed' : ''}`);
      setText(f.exit, FINAL_STATES.has(j.state) ? String(num(j.exit_code)) : '—');
      if (data.cost) {
        setText(f.cost, data.cost.error ? `unavailable: ${data.cost.error}` : fmtMoney(data.cost.amount, data.cost.currency));
      }
      f.costRow.hidden = f.cost.textContent === '—';
      const final = FINAL_STATES.has(j.state);
      if (!this.acting) { f.cancel.disabled = final; f.move.disabled = final; }
      if (final) this.resetCancel();
      this.updateEvents(Array.isArray(data.events) ? data.events : []);
      this.updateCopies(Array.isArray(data.copies) ? data.copies : []);
      this.ctx.ok();
    },

    // Events only ever grow: append the new ones; rebuild if the list we
    // hold is no longer a prefix of the server's (history rewritten).
    updateEvents(events) {
      const sig = (e) => `${e.time}|${e.kind}|${e.cluster}|${e.native_id}|${e.detail}`;
      const known = this.events;
      if (events.length < known.count || (known.count && sig(events[known.count - 1]) !== known.lastSig)) {
        this.f.events.textContent = '';
        known.count = 0;
      }
      for (let i = known.count; i < events.length; i++) {
        const e = events[i];
        this.f.events.append(el('li', {},
          el('div', { class: 'event-head' },
            el('time', { datetime: isoTime(e.time), text: fmtTime(e.time) }), ' ',
            el('strong', { text: e.kind || 'event' }),
            e.cluster ? el('span', { class: 'muted', text: ` ${e.cluster}${e.native_id ? ':' + e.native_id : ''}` }) : null),
          e.detail ? el('div', { class: 'detail', text: e.detail }) : null));
      }
      known.count = events.length;
      known.lastSig = events.length ? sig(events[events.length - 1]) : '';
    },

    updateCopies(copies) {
      syncList(this.f.copies, this.copies, copies, (c) => `${c.cluster}:${c.native_id}`,
        () => {
          const d = { summary: el('summary', {}), meta: el('p', { class: 'small muted' }),
            args: el('pre', { class: 'mono-block wrap' }), script: el('pre', { class: 'mono-block' }) };
          d.root = el('details', { class: 'copy' }, d.summary, d.meta,
            el('h3', { class: 'mini', text: 'Arguments' }), d.args, el('h3', { class: 'mini', text: 'Script' }), d.script);
          return d;
        },
        (d, c) => {
          setText(d.summary, `${c.cluster}:${c.native_id || '?'} · ${c.partition || 'default partition'} · ${c.state || '—'}`);
          const meta = [`submitted ${fmtTime(c.submitted)}`];
          if (c.workdir) meta.push(`workdir ${c.workdir}`);
          if (c.source) meta.push(`source ${c.source}`);
          setText(d.meta, meta.join(' · '));
          setText(d.args, c.args || '(none)');
          setText(d.script, c.script || '(none)');
        });
    },

    async loadExplain() {
      try {
        const data = await this.ctx.get(jobPath(this.id, '/explain'));
        if (!this.ctx.alive) return;
        setText(this.f.explain, data.text || '(nothing to show)');
        showVerdict(this.f.canRun, data.can_run);
        this.ctx.ok('explain');
      } catch (e) {
        if (this.ctx.alive) setText(this.f.explain, '(unavailable)');
        this.ctx.fail(e, 'explain');
      }
    },

    // A log that cannot be read (no output file yet, say) is said in the
    // log's own status line: it is not an error of the page.
    async refreshLog() {
      let data;
      try {
        data = await this.ctx.get(jobPath(this.id, `/output?offset=${this.log.offset}`));
      } catch (e) {
        if (e instanceof HttpError && e.status !== 403 && this.ctx.alive) {
          setText(this.f.logState, `log not available: ${e.message}`);
          return;
        }
        throw e;
      }
      if (!this.ctx.alive) return;
      const log = this.log;
      const size = num(data.size);
      const pre = this.f.log;
      if (size < log.offset) {
        // The output file was replaced (a restart or move): read it anew.
        pre.textContent = '';
        Object.assign(log, { offset: 0, chars: 0 });
        this.logPoller.kick();
        return;
      }
      const output = typeof data.output === 'string' ? data.output : '';
      if (output) {
        const atBottom = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
        log.chars += output.length;
        if (log.chars > LOG_MAX_CHARS) {
          const keep = (pre.textContent + output).slice(-LOG_MAX_CHARS / 2);
          pre.textContent = `[… earlier output not shown …]\n${keep}`;
          log.chars = pre.textContent.length;
        } else {
          pre.append(document.createTextNode(output));  // appending a node avoids re-parsing the whole log
        }
        if (atBottom) pre.scrollTop = pre.scrollHeight;
      }
      log.offset = size;
      if (data.final) {
        // One more read after the first final answer picks up what was
        // flushed as the job ended; then the log is complete.
        if (log.finalSeen) this.logPoller.stop();
        log.finalSeen = true;
      }
      setText(this.f.logState, `${log.finalSeen ? 'complete' : 'following'} · ${size} bytes` +
        (data.state ? ` · ${data.state}` : ''));
      this.ctx.ok('log');
    },

    // Two clicks within 5 s: the first only arms the button.
    cancelClicked() {
      if (this.confirmTimer) { this.resetCancel(); this.runAction(this.f.cancel, '/cancel', 'Cancel requested.'); return; }
      setText(this.f.cancel, 'Confirm cancel');
      this.f.cancel.classList.add('armed');
      this.confirmTimer = this.ctx.timeout(() => this.resetCancel(), 5000);
    },

    resetCancel() {
      clearTimeout(this.confirmTimer);
      this.confirmTimer = 0;
      setText(this.f.cancel, 'Cancel');
      this.f.cancel.classList.remove('armed');
    },

    moveClicked() { this.runAction(this.f.move, '/move', 'Move requested.'); },

    async runAction(button, rest, fallback) {
      const r = this.f.result;
      this.acting = true;
      button.disabled = true;
      setText(r, 'Working…');
      r.classList.remove('error');
      try {
        const data = await this.ctx.post(jobPath(this.id, rest), {});
        if (!this.ctx.alive) return;
        setText(r, data.note || fallback);
      } catch (e) {
        if (!this.ctx.alive || e.name === 'AbortError') return;
        if (e instanceof HttpError && e.status === 403) { expireSession(); return; }
        setText(r, e.message);
        r.classList.add('error');
      }
      this.acting = false;
      button.disabled = FINAL_STATES.has(this.state);
      this.jobPoller.kick();
    },
  };

  function showVerdict(node, canRun) {
    node.hidden = canRun === undefined;
    setText(node, canRun ? 'Some cluster can run it' : 'No cluster can run it');
    setClass(node, `verdict ${canRun ? 'ok' : 'bad'}`);
  }

  // --------------------------------------------------------------- Explain view

  const ExplainView = {
    title: 'Where would this start?',
    saved: { script: '', args: '', name: '' },  // kept across visits

    enter(ctx) {
      this.ctx = ctx;
      const s = this.saved;
      this.script = el('textarea', { id: 'explain-script', class: 'mono', rows: 14, spellcheck: 'false',
        placeholder: '#!/bin/bash\n#SBATCH --gpus=1 ...', oninput: () => { s.script = this.script.value; },
        onkeydown: (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.run(); } } });
      this.script.value = s.script;
      this.args = el('input', { id: 'explain-args', type: 'text', class: 'mono', autocomplete: 'off', spellcheck: 'false',
        placeholder: 'extra sbatch options, e.g. --gpus=h100:8 -t 60', value: s.args,
        oninput: () => { s.args = this.args.value; } });
      this.file = el('input', { type: 'file', id: 'explain-file', onchange: () => this.loadFile() });
      this.fileName = el('span', { class: 'muted small', text: s.name ? `loaded ${s.name}` : '' });
      this.button = el('button', { type: 'submit', id: 'explain-run', class: 'primary' }, 'Explain');
      this.busy = el('span', { class: 'busy', role: 'status', 'aria-live': 'polite', hidden: true },
        el('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Asking every cluster…');
      this.verdict = el('p', { id: 'explain-verdict', class: 'verdict', hidden: true, 'aria-live': 'polite' });
      this.result = el('pre', { id: 'explain-result', class: 'mono-block', 'aria-live': 'polite', hidden: true });
      viewRoot.append(
        el('div', { class: 'view-head' }, el('h1', { text: 'Where would this start?' }),
          el('p', { class: 'muted view-sub', text: 'Paste a batch script: every cluster is asked where and when it would start, nothing is submitted.' })),
        el('form', { class: 'card explain-form', onsubmit: (e) => { e.preventDefault(); this.run(); } },
          el('label', { for: 'explain-script', class: 'field-label', text: 'Batch script' }), this.script,
          el('div', { class: 'file-row' }, el('label', { for: 'explain-file', class: 'field-label', text: 'or load a file' }),
            this.file, this.fileName),
          el('label', { for: 'explain-args', class: 'field-label', text: 'Extra sbatch options' }), this.args,
          el('div', { class: 'actions' }, this.button, this.busy)),
        ctx.errorEl, this.verdict, this.result);
    },
    leave() {},

    async loadFile() {
      const file = this.file.files && this.file.files[0];
      if (!file) return;
      try {
        const text = await file.text();
        if (!this.ctx.alive) return;
        this.script.value = this.saved.script = text;
        this.saved.name = file.name;
        setText(this.fileName, `loaded ${file.name}`);
        this.ctx.ok('file');
      } catch (e) {
        this.ctx.fail(new Error(`Cannot read ${file.name}: ${e.message || e}`), 'file');
      }
    },

    async run() {
      if (this.button.disabled) return;
      this.button.disabled = true;
      this.busy.hidden = false;
      try {
        const data = await this.ctx.post('/v1/explain', {
          script: this.script.value, args: splitArgs(this.args.value), name: this.saved.name || 'script.sh' });
        if (!this.ctx.alive) return;
        showVerdict(this.verdict, !!data.can_run);
        setText(this.result, data.text || '(no answer text)');
        this.result.hidden = false;
        this.ctx.ok('explain');
      } catch (e) {
        this.ctx.fail(e, 'explain');
      } finally {
        if (this.ctx.alive) { this.button.disabled = false; this.busy.hidden = true; }
      }
    },
  };

  // -------------------------------------------------------------------- router

  const ROUTES = [
    [/^#\/clusters$/, ClustersView, 'nav-clusters'],
    [/^#\/jobs$/, JobsView, 'nav-jobs'],
    [/^#\/job\/(.+)$/, JobView, 'nav-jobs'],
    [/^#\/explain$/, ExplainView, 'nav-explain'],
  ];

  let current = null;  // {view, ctx}

  function route() {
    const hash = location.hash || '#/clusters';
    let match = null;
    let found = ROUTES.find(([re]) => (match = re.exec(hash)));
    if (!found) { found = ROUTES[0]; match = null; }
    const [, view, navId] = found;
    let arg = match && match[1];
    if (arg) { try { arg = decodeURIComponent(arg); } catch (e) { /* keep it raw */ } }

    if (current) { current.ctx.close(); current.view.leave(); }
    viewRoot.textContent = '';
    window.scrollTo(0, 0);
    for (const [, , id] of ROUTES) setAttr(document.getElementById(id), 'aria-current', id === navId ? 'page' : null);
    document.title = `${view.title} · skyslurm`;
    const ctx = new ViewContext();
    current = { view, ctx };
    view.enter(ctx, arg);
  }

  takeLoginSecret();
  window.addEventListener('hashchange', route);
  route();
})();
