// alight ui: a read-only view of the store. Everything recorded (model output, tool output, task text) is untrusted:
// elements are built with textContent only, never innerHTML, and the server's CSP runs no other script.

const main = document.getElementById('main');
let timer = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

async function get(path) {
  const res = await fetch(path);
  if (!res.ok) throw new Error(`${path}: ${res.status} ${(await res.json()).error ?? ''}`);
  return res.json();
}

const fmt = (v) =>
  v === null || v === undefined ? '–' : typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(4) : String(v);
const when = (ms) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '–');

function table(columns, rows, attrs) {
  return el(
    'table',
    attrs,
    el('thead', null, el('tr', null, ...columns.map((c) => el('th', { text: c })))),
    el(
      'tbody',
      null,
      ...rows.map((r) =>
        el(
          'tr',
          r.attrs,
          ...r.cells.map((c) =>
            c instanceof Node
              ? el('td', null, c)
              : el('td', { text: fmt(c), class: typeof c === 'number' ? 'num' : '' }),
          ),
        ),
      ),
    ),
  );
}

async function runsPage() {
  const runs = await get('/api/runs');
  return [
    el('h1', { text: 'Runs' }),
    table(
      ['run', 'mode', 'created', 'rollouts', 'succeeded', 'failed', 'calls', 'mean reward'],
      runs.map((r) => ({
        attrs: { 'data-run': r.name },
        cells: [
          el('a', { href: `#/run/${encodeURIComponent(r.name)}`, text: r.name }),
          r.mode,
          when(r.created_at),
          r.rollouts,
          r.succeeded,
          r.failed,
          r.calls,
          r.mean_reward,
        ],
      })),
      { id: 'runs' },
    ),
  ];
}

const curveMetrics = [
  'reward_mean',
  'pass_rate',
  'loss',
  'val_loss',
  'kl_rollout',
  'entropy',
  'staleness_mean',
  'tokens_per_s',
];

/** One metric over the steps as an SVG polyline (points as data attributes, for reading back). */
function curve(name, steps) {
  const points = steps.map((s) => [s.step, s.metrics[name]]).filter(([, v]) => typeof v === 'number');
  if (points.length === 0) return null;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', '220');
  svg.setAttribute('height', '90');
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = (x) => 10 + ((x - x0) / (x1 - x0 || 1)) * 200;
  const sy = (y) => 80 - ((y - y0) / (y1 - y0 || 1)) * 70;
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', points.map(([x, y]) => `${sx(x)},${sy(y)}`).join(' '));
  svg.append(line);
  const box = el(
    'div',
    { class: 'curve', 'data-metric': name, 'data-points': JSON.stringify(points) },
    el('div', { text: `${name}: ${fmt(ys.at(-1))}` }),
    svg,
  );
  return box;
}

/** A training run with steps still to come: its page is fetched again every few seconds. */
let follow = false;

const filters = { failed: 'failed', 'zero-variance': 'zero-variance groups', breaks: 'merge breaks' };

async function runPage(name, offset, filter) {
  const run = await get(`/api/runs/${encodeURIComponent(name)}`);
  follow = run.mode === 'train' && run.steps.length < (run.config?.train?.schedule?.steps ?? 0);
  const evaluation = await get(`/api/runs/${encodeURIComponent(name)}/eval`).catch(() => null);
  const page =
    run.mode === 'sft'
      ? null
      : await get(
          `/api/runs/${encodeURIComponent(name)}/rollouts?offset=${offset}&limit=50${filter ? `&filter=${encodeURIComponent(filter)}` : ''}`,
        );
  const metrics = [...new Set(run.steps.flatMap((s) => Object.keys(s.metrics)))].filter((m) =>
    [
      'reward_mean',
      'pass_rate',
      'loss',
      'val_loss',
      'loss_tokens',
      'entropy',
      'rollouts',
      'rollouts_failed',
      'tokens',
    ].includes(m),
  );
  const link = (o, s, text) =>
    el('a', {
      href: `#/run/${encodeURIComponent(name)}?offset=${o}${s ? `&filter=${encodeURIComponent(s)}` : ''}`,
      text,
    });
  return [
    el('h1', { text: `Run ${run.name}` }),
    el('p', { text: `${run.mode}, created ${when(run.created_at)}` }),
    run.steps.length
      ? el('div', { class: 'curves', id: 'curves' }, ...curveMetrics.map((m) => curve(m, run.steps)).filter(Boolean))
      : null,
    run.steps.length ? el('h2', { text: 'Steps' }) : null,
    run.steps.length
      ? table(
          ['step', ...metrics],
          run.steps.map((s) => ({
            attrs: { 'data-step': String(s.step) },
            cells: [s.step, ...metrics.map((m) => s.metrics[m])],
          })),
          { id: 'steps' },
        )
      : null,
    ...(page ? rolloutsSection(page, offset, filter, link) : await examplesSection(name, offset, link)),
    evaluation ? evalSection(name, evaluation) : null,
    el('details', null, el('summary', { text: 'settings' }), el('pre', { text: JSON.stringify(run.config, null, 2) })),
  ];
}

/** A run's rollouts, a page at a time, with the filters. */
function rolloutsSection(page, offset, filter, link) {
  return [
    el('h2', { text: `Rollouts (${page.total}${filter ? `: ${filters[filter]}` : ''})` }),
    el(
      'p',
      { id: 'filters' },
      link(0, '', 'all'),
      ...Object.entries(filters).flatMap(([f, text]) => [' · ', link(0, f, text)]),
      ...(offset > 0 || offset + 50 < page.total
        ? [
            ' · ',
            offset > 0 ? link(Math.max(0, offset - 50), filter, '← previous') : '',
            ' ',
            offset + 50 < page.total ? link(offset + 50, filter, 'next →') : '',
          ]
        : []),
    ),
    table(
      ['rollout', 'task', 'group', 'state', 'reward', 'advantage', 'calls', 'tokens', 'breaks', 'seconds', 'reason'],
      page.rows.map((r) => ({
        attrs: { 'data-rollout': r.id, class: r.state === 'failed' ? 'failed' : '' },
        cells: [
          el('a', { href: `#/rollout/${encodeURIComponent(r.id)}`, text: r.id }),
          r.task_id,
          r.group_id,
          r.state,
          r.reward,
          r.advantage,
          r.calls,
          r.prompt_tokens + r.completion_tokens,
          r.breaks,
          r.ended_at && r.started_at ? (r.ended_at - r.started_at) / 1000 : null,
          r.error,
        ],
      })),
      { id: 'rollouts' },
    ),
  ];
}

/** An `alight sft` run's curated examples, each linked to its tokens and, where this store holds it, its rollout. */
async function examplesSection(name, offset, link) {
  const page = await get(`/api/runs/${encodeURIComponent(name)}/examples?offset=${offset}&limit=50`).catch((err) => ({
    error: err.message,
  }));
  if (page.error) return [el('p', { class: 'failed', text: page.error })];
  return [
    el('h2', { text: `Examples (${page.total})` }),
    el('p', { text: `from ${page.file}` }),
    offset > 0 || offset + 50 < page.total
      ? el(
          'p',
          null,
          offset > 0 ? link(Math.max(0, offset - 50), '', '← previous') : '',
          ' ',
          offset + 50 < page.total ? link(offset + 50, '', 'next →') : '',
        )
      : null,
    table(
      ['example', 'rollout', 'reward', 'rows', 'tokens', 'loss tokens'],
      page.rows.map((e) => ({
        attrs: { 'data-example': String(e.index) },
        cells: [
          el('a', { href: `#/example/${encodeURIComponent(name)}/${e.index}`, text: String(e.index) }),
          e.inStore ? el('a', { href: `#/rollout/${encodeURIComponent(e.rollout)}`, text: e.rollout }) : e.rollout,
          e.reward,
          e.rows,
          e.tokens,
          e.lossTokens,
        ],
      })),
      { id: 'examples' },
    ),
  ];
}

/** One curated example, token by token: the tokens its loss is on coloured, the rest (prompt, tool output) plain. */
async function examplePage(name, index) {
  const e = await get(`/api/runs/${encodeURIComponent(name)}/examples/${index}`);
  return [
    el('h1', { text: `Example ${index} of ${name}` }),
    el(
      'p',
      null,
      el('a', { href: `#/run/${encodeURIComponent(name)}`, text: `run ${name}` }),
      ' · rollout ',
      e.inStore ? el('a', { href: `#/rollout/${encodeURIComponent(e.rollout)}`, text: e.rollout }) : e.rollout,
      ` · reward ${fmt(e.reward)} · ${e.lossTokens} tokens in the loss${e.tokenizer ? '' : ' · token ids only (no tokenizer: alight ui --tokenizer …)'}`,
    ),
    el('section', { id: 'rows' }, ...e.rows.flatMap((row, r) => rowView({ ...row, calls: [], inBatch: null }, r, []))),
  ];
}

/** An eval run's attempts: status, flags, reason, each linked to its diff and test log. */
function evalSection(name, e) {
  const s = e.summary;
  return el(
    'section',
    { id: 'eval' },
    el('h2', { text: 'Evaluation' }),
    el('p', {
      text: `resolved ${s.resolved_instances} of ${s.submitted_instances} (unresolved ${s.unresolved_instances}, empty ${s.empty_patch_instances}, error ${s.error_instances})`,
    }),
    table(
      ['instance', 'attempt', 'status', 'flags', 'reason', 'seconds', 'rollout'],
      e.attempts.map((a) => ({
        attrs: { 'data-instance': a.instance_id, 'data-attempt': String(a.attempt) },
        cells: [
          el('a', {
            href: `#/eval/${encodeURIComponent(name)}/${encodeURIComponent(a.instance_id)}/${a.attempt}`,
            text: a.instance_id,
          }),
          a.attempt,
          a.status,
          a.flags.map((f) => `${f.file}${f.removed ? ' (removed)' : ''}`).join(', ') || '–',
          a.error,
          a.seconds,
          a.rollout_id ? el('a', { href: `#/rollout/${encodeURIComponent(a.rollout_id)}`, text: a.rollout_id }) : '–',
        ],
      })),
      { id: 'attempts' },
    ),
  );
}

/** One attempt: its status, the diff it produced, the grader's test log. */
async function evalPage(name, instance, attempt) {
  const e = await get(`/api/runs/${encodeURIComponent(name)}/eval`);
  const a = e.attempts.find((x) => x.instance_id === instance && x.attempt === attempt);
  if (!a) throw new Error(`no attempt ${attempt} of ${instance} in ${name}`);
  const log = await get(`/api/runs/${encodeURIComponent(name)}/eval/${encodeURIComponent(instance)}/${attempt}`).catch(
    () => null,
  );
  return [
    el('h1', { text: `${instance}, attempt ${attempt}` }),
    el(
      'p',
      null,
      el('a', { href: `#/run/${encodeURIComponent(name)}`, text: `run ${name}` }),
      ` · ${a.status}${a.error ? ` · ${a.error}` : ''}`,
    ),
    el('h2', { text: 'The diff' }),
    el('pre', { id: 'patch', text: a.patch ?? '(none)' }),
    el('h2', { text: 'The test log' }),
    el('pre', { id: 'log', text: log ?? '(no test log)' }),
  ];
}

/** Two eval runs paired per instance, with the exact McNemar test (eval compare's numbers). */
async function comparePage(a, b) {
  const c = await get(`/api/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`);
  return [
    el('h1', { text: `${a} vs ${b}` }),
    table(
      ['instances in both', 'both resolved', `only ${a}`, `only ${b}`, 'neither', 'McNemar p'],
      [
        {
          attrs: { id: 'paired' },
          cells: [c.common, c.bothResolved, c.onlyA.length, c.onlyB.length, c.neither, c.pValue],
        },
      ],
    ),
    el('p', { text: `only ${a}: ${c.onlyA.join(', ') || '–'}` }),
    el('p', { text: `only ${b}: ${c.onlyB.join(', ') || '–'}` }),
  ];
}

function content(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value.map((p) => (typeof p?.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  return JSON.stringify(value ?? '');
}

function messageView(m) {
  const parts = [el('span', { class: 'role', text: m.role ?? '?' }), content(m.content)];
  if (m.reasoning_content || m.reasoning)
    parts.push(
      el(
        'details',
        null,
        el('summary', { text: 'reasoning' }),
        el('pre', { text: content(m.reasoning_content ?? m.reasoning) }),
      ),
    );
  for (const t of m.tool_calls ?? [])
    parts.push(el('pre', { text: `→ ${t.function?.name}(${t.function?.arguments})` }));
  return el('div', { class: `message ${m.role ?? ''}` }, ...parts);
}

/** What a call's answer said: a chat message, a completion's text, or the raw answer. */
function answerView(response) {
  const choice = response?.choices?.[0];
  if (choice?.message) return messageView(choice.message);
  if (typeof choice?.text === 'string') return el('div', { class: 'message assistant', text: choice.text });
  return el('pre', { text: JSON.stringify(response, null, 2) });
}

async function rolloutPage(id) {
  const r = await get(`/api/rollouts/${encodeURIComponent(id)}`);
  return [
    el('h1', { text: `Rollout ${r.id}` }),
    el(
      'p',
      null,
      el('a', { href: `#/run/${encodeURIComponent(r.run)}`, text: `run ${r.run}` }),
      ` · task ${r.task_id ?? '–'} · ${r.state} · reward ${fmt(r.reward)}${r.error ? ` · ${r.error}` : ''}`,
    ),
    r.rewards.length > 1 || r.rewards.some((w) => w.reason)
      ? table(
          ['source', 'reward', 'reason'],
          r.rewards.map((w) => ({ attrs: { 'data-source': w.source }, cells: [w.source, w.value, w.reason ?? '–'] })),
          { id: 'rewards' },
        )
      : null,
    ...r.calls.map((c) =>
      el(
        'div',
        { class: 'call', 'data-call': String(c.seq) },
        el('h3', {
          text: `call ${c.seq}: ${c.protocol}${c.stream ? ', streamed' : ''}, ${c.status}, ${fmt(c.latencyMs)} ms, ${c.promptTokens ?? '–'} + ${c.completionTokens ?? '–'} tokens, version ${fmt(c.modelVersion)}`,
        }),
        ...(c.request.messages ?? [{ role: 'prompt', content: c.request.prompt ?? c.request.input ?? '' }]).map(
          messageView,
        ),
        c.response ? answerView(c.response) : el('p', { class: 'failed', text: c.error ?? 'no answer' }),
        el(
          'details',
          null,
          el('summary', { text: 'raw request and answer' }),
          el('pre', { text: JSON.stringify({ request: c.request, response: c.response }, null, 2) }),
        ),
      ),
    ),
    await rowsView(id),
  ];
}

function breakMark(b) {
  return el('span', {
    class: 'break',
    'data-kind': b.kind,
    'data-seq': String(b.seq),
    'data-position': String(b.position),
    title: b.reason,
    text: `⟂ ${b.kind} (call ${b.seq})`,
  });
}

/** One training row, token by token: prompt plain, sampled tokens coloured by their logprob, breaks marked in place. */
function rowView(row, r, breaks) {
  const here = breaks.filter((b) => b.row === r);
  const box = el('div', { class: 'row', 'data-row': String(r) });
  row.tokens.forEach((t, i) => {
    for (const b of here.filter((x) => x.position === i)) box.append(breakMark(b));
    const span = el('span', {
      class: t.sampled ? 'tok sampled' : 'tok',
      'data-i': String(i),
      'data-weight': t.weight === null ? '' : String(t.weight),
      title: `#${i} id ${t.id}${t.sampled ? (t.logprob === null ? ' (in the loss; no logprob recorded)' : ` logprob ${t.logprob.toFixed(3)}`) : ' (prompt)'}${t.weight === null ? '' : ` loss weight ${t.weight.toExponential(3)}`}`,
      text: t.text ?? `[${t.id}]`,
    });
    // CSSOM, not a style attribute: the CSP allows no inline style.
    // A token in the loss with no recorded logprob (a foreign trace rendered for the student) is blue.
    if (t.sampled)
      span.style.setProperty(
        'background-color',
        t.logprob === null ? 'hsl(210, 70%, 85%)' : `hsl(${Math.round(120 * Math.exp(t.logprob))}, 70%, 82%)`,
      );
    box.append(span);
  });
  for (const b of here.filter((x) => x.position >= row.tokens.length)) box.append(breakMark(b));
  const sampled = row.tokens.filter((t) => t.sampled).length;
  const weighted = row.tokens.filter((t) => t.weight > 0);
  const batch =
    row.inBatch === null
      ? ''
      : row.inBatch
        ? `; loss weight ${weighted.length ? weighted[0].weight.toExponential(3) : 0} on ${weighted.length} tokens`
        : '; dropped from the batch';
  return [
    el('h3', {
      text: `row ${r}: calls ${row.calls.join(', ')}; ${row.tokens.length} tokens, ${sampled} sampled${batch}`,
    }),
    box,
  ];
}

async function rowsView(id) {
  const v = await get(`/api/rollouts/${encodeURIComponent(id)}/rows`);
  return el(
    'section',
    { id: 'rows' },
    el('h2', { text: `Training rows (${v.rows.length})` }),
    el('p', {
      text: `reward ${fmt(v.reward)} · advantage ${fmt(v.advantage)} (${v.estimator}, group of ${v.group}) · ${v.step === null ? 'in no training step' : `trained in step ${v.step}`} · ${v.breaks.length} merge break(s)${v.tokenizer ? '' : ' · token ids only (no tokenizer: alight ui --tokenizer …)'}`,
    }),
    ...v.rows.flatMap((row, r) => rowView(row, r, v.breaks)),
    v.breaks.length
      ? table(
          ['call', 'row', 'token', 'kind', 'why', 'row had', 'call sent'],
          v.breaks.map((b) => ({
            attrs: { 'data-break': String(b.seq) },
            cells: [b.seq, b.row, b.position, b.kind, b.reason, b.contextText ?? '–', b.promptText ?? '–'],
          })),
          { id: 'breaks' },
        )
      : null,
  );
}

function page(parts, params) {
  if (parts[0] === 'run') return runPage(parts[1], Number(params.get('offset') ?? 0), params.get('filter') ?? '');
  if (parts[0] === 'rollout') return rolloutPage(parts[1]);
  if (parts[0] === 'eval') return evalPage(parts[1], parts[2], Number(parts[3]));
  if (parts[0] === 'example') return examplePage(parts[1], Number(parts[2]));
  if (parts[0] === 'compare') return comparePage(parts[1], parts[2]);
  return runsPage();
}

// Each navigation's number: a page whose fetches end after the next navigation is dropped, not drawn over it.
let generation = 0;

async function route() {
  clearTimeout(timer);
  const mine = ++generation;
  const hash = location.hash || '#/';
  const [path, q] = location.hash.slice(1).split('?');
  const parts = (path || '/').split('/').filter(Boolean).map(decodeURIComponent);
  document.getElementById('where').textContent = parts.join(' / ');
  follow = false;
  let nodes;
  try {
    nodes = await page(parts, new URLSearchParams(q ?? ''));
  } catch (err) {
    nodes = [el('p', { class: 'failed', text: String(err.message ?? err) })];
  }
  // The hash can change before its hashchange event runs: a page drawn for the old one is stale already.
  if (mine !== generation || (location.hash || '#/') !== hash) return;
  main.replaceChildren(...nodes.filter(Boolean));
  main.setAttribute('data-ready', hash);
  if (follow) timer = setTimeout(route, 3000);
}

window.addEventListener('hashchange', route);
route();
