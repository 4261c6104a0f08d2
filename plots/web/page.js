// page.js — the page: settings in, one Worker per run, progress and stop, the evaluation
// by length and position, decoding an input with its attention maps or LSTM gates,
// downloads, a checkpoint opened; in English or Chinese (docs/zh/glossary.md's terms).
//
// Design. The page holds no model: each run is a Worker (worker.js after the WebAssembly
// module, both from the page's own <script type="text/plain"> blocks, through one Blob
// URL) that trains a chunk at a time and posts train_log.tsv after each chunk, then the
// run's files (the command line's formats). Everything shown is read from those files:
// the progress from train_log.tsv, the evaluation from eval.tsv and eval_positions.tsv,
// the decoded input's matrices from trace/*.tsv. The figures are the command line's
// (page-figures.js): the run's Worker makes the comparison directory of the run with the
// C writers of `attnlab report` (page_compare; page_curves while it trains; page_stage
// first for a checkpoint opened), and gnuplot compiled to WebAssembly runs the project's
// own plots/*.gp on it; each panel shows its SVG inline, report.html's caption under it,
// and its numbers as a table behind "numbers". One more Worker merges every finished run
// into one comparison (section "All runs together"), drawn by the same scripts.
// page-text.js holds the sentences, page-figures.js the drawing; this file the runs.
/* global tarArchive, TEXT, t, lang, $, el, tsv, utf8, fmt, table, heatCell, FIG,
   readFigures, panel, figurePanels, askLiveCurves, drawLiveCurves, mergeAll, showAll, PRIO */
'use strict';

// ---- the Workers' code: the module and worker.js, from the page itself ----------------
const workerUrl = URL.createObjectURL(new Blob(
    [$('#core-src').textContent, '\n', $('#worker-src').textContent],
    {type: 'text/javascript'}));

// ---- runs --------------------------------------------------------------------------------
const runs = [];
let dataFile = null; // {path, text} of the user's pairs, as the runs read it

function runName(model, task, seed) {
    return `${model}-${task}-s${seed}`;
}

function setStatus(run, key) {
    run.state = key;
    run.ui.state.textContent = t(key);
    const busy = runs.some((r) => r.state === 'training_now' || r.state === 'loading');
    $('#stop-all').disabled = !busy;
    $('#download-all').disabled = !runs.some((r) => r.files);
    run.ui.stop.disabled = run.state !== 'training_now' && run.state !== 'loading';
}

function makeCard(run) {
    const ui = {};
    ui.card = el('article', {class: 'run', 'aria-labelledby': 'h-' + run.id});
    ui.title = el('h3', {id: 'h-' + run.id, text: run.name});
    ui.state = el('span', {class: 'muted'});
    ui.stop = el('button', {type: 'button'});
    ui.stop.addEventListener('click', () => stopRun(run));
    ui.progress = el('progress', {max: String(run.steps || 1), value: '0'});
    ui.status = el('p', {class: 'status'});
    ui.about = el('p', {class: 'muted'});
    ui.curves = el('figure', {class: 'panel'});
    ui.eval = el('figure', {class: 'panel'});
    ui.positions = el('figure', {class: 'panel'});
    ui.decode = el('div', {class: 'decode', hidden: ''});
    ui.downloads = el('p', {hidden: ''});
    ui.error = el('p', {class: 'error', role: 'alert'});
    ui.drawing = el('p', {class: 'muted drawing-note', hidden: ''});
    ui.card.append(ui.title, el('p', {}, ui.state, ' ', ui.stop), ui.progress, ui.status,
                   ui.about, ui.error, ui.drawing, ui.curves, ui.eval, ui.positions, ui.decode, ui.downloads);
    run.ui = ui;
    let grid = $('#runs-grid');
    if (!grid) {
        grid = el('div', {id: 'runs-grid'});
        $('#runs').append(grid);
    }
    $('#no-runs').hidden = true;
    grid.append(ui.card);
}

function startWorker(run, message) {
    run.worker = new Worker(workerUrl);
    run.worker.onmessage = (e) => onMessage(run, e.data);
    run.worker.onerror = (e) => {
        run.ui.error.textContent = e.message || 'Worker error';
        setStatus(run, 'failed');
    };
    run.worker.postMessage(message);
}

// The runs training now (they share the cores with the drawing of live curves).
const busyRuns = () => Math.max(1, runs.filter((r) => r.state === 'training_now').length);

function onMessage(run, m) {
    const shown = () => {
        render(run);
        if (run.decoded)
            showDecoded(run);
    };
    if (m.type === 'ready') {
        readFigures(m.figures);
        return;
    } else if (m.type === 'created') {
        run.config = Object.fromEntries(tsv(m.config).rows);
        run.steps = Number(run.config.steps);
        run.ui.progress.max = run.steps;
        setStatus(run, run.opened ? 'evaluating' : 'training_now');
        render(run);
    } else if (m.type === 'progress' || m.type === 'trained') {
        run.log = tsv(m.log);
        if (m.type === 'trained')
            run.ended = m.state;
        render(run);
        if (m.type === 'progress')
            askLiveCurves(run, busyRuns);
    } else if (m.type === 'curves') {
        drawLiveCurves(run, m.compare, busyRuns, shown);
    } else if (m.type === 'evaluating') {
        setStatus(run, 'evaluating');
    } else if (m.type === 'files') {
        run.files = m.files;
        run.view = m.view;
        if (m.compare)
            figurePanels(run, m.compare, run.opened ? ['accuracy', 'positions']
                : ['curves', 'accuracy', 'positions'], PRIO.run, shown);
        setStatus(run, run.opened ? 'opened' : run.ended === 'stopped' ? 'stopped'
            : run.ended === 'failed' ? 'failed' : 'done');
        render(run);
        mergeAll(runs);
    } else if (m.type === 'decoded') {
        run.decoded = {text: m.text, files: m.files};
        if (m.view)
            run.view = m.view;
        showDecoded(run);
        if (m.compare)
            figurePanels(run, m.compare, ['attention', 'gates'], PRIO.maps, shown);
    } else if (m.type === 'error') {
        run.ui.error.textContent = m.message;
        if (m.where !== 'decode' && m.where !== 'compare')
            setStatus(run, 'failed');
    }
}

function stopRun(run) {
    if (run.worker && (run.state === 'training_now' || run.state === 'loading'))
        run.worker.postMessage({cmd: 'stop'});
}

// ---- what a run shows --------------------------------------------------------------------
function render(run) {
    const ui = run.ui;
    ui.stop.textContent = t('stop');
    ui.title.textContent = run.name;
    ui.state.textContent = t(run.state);
    if (run.config)
        ui.about.textContent = `${run.config.model} · ${t('params')} ${run.config.parameters} · ` +
            `${run.config.task} · ${t('seed')} ${run.config.seed}`;
    if (run.log && run.log.rows.length) {
        const H = run.log.head, last = run.log.rows[run.log.rows.length - 1];
        const v = (name) => last[H.indexOf(name)];
        ui.progress.value = Number(v('step'));
        ui.status.textContent = `${t('step')} ${v('step')}/${run.steps} · ${t('loss')} ` +
            `${fmt(v('loss'), 4)} · ${t('tf_acc')} ${fmt(v('token_acc'), 3)} · ${t('lr')} ` +
            `${v('lr')} · ${t('val_acc')} ${fmt(v('val_token_acc'), 3)} · ` +
            `${fmt(v('seconds'), 1)} ${t('seconds')}`;
        const rows = run.log.rows.slice(-12).map((r) => [r[0], fmt(r[3], 4), fmt(r[4], 3),
                                                         r[2], fmt(r[9], 3)]);
        const live = run.svgs && run.svgs.curves && run.svgs.curves.live;
        panel(ui.curves, live ? `${t('curves')} (${t('live')} ${v('step')})` : t('curves'),
              table([t('step'), t('loss'), t('tf_acc'), t('lr'), t('val_acc')], rows), run,
              ['curves']);
        ui.card.dataset.liveDraws = String(run.liveDraws || 0);
    }
    if (run.files && run.files['build.tsv']) {
        const b = Object.fromEntries(tsv(utf8.decode(run.files['build.tsv'])).rows);
        const why = run.ended === 'stopped' ? `${t('stopped_at')} ${b.train_steps}`
            : t('rule_' + b.stopped);
        ui.status.textContent += ` — ${why}; ${t('best')} ${b.best_step}.`;
    }
    if (run.files && run.files['eval.tsv'] && run.config) {
        const e = tsv(utf8.decode(run.files['eval.tsv']));
        const lo = Number(run.config.train_min), hi = Number(run.config.train_max);
        const rows = e.rows.map((r) => [r[1], r[2], fmt(r[3], 3), fmt(r[4], 3), fmt(r[5], 4)]);
        panel(ui.eval, `${t('by_length')} — ${t('in_range')} ${lo}–${hi}`,
              table([t('len'), t('samples'), t('token_acc'), t('seq_acc'), t('loss')], rows,
                    (r) => (Number(r[0]) >= lo && Number(r[0]) <= hi ? 'in-range' : '')),
              run, ['accuracy']);
        showPositions(run);
        showDecodeForm(run);
        showDownloads(run);
    }
    ui.card.classList.toggle('drawing', !!run.drawing);
    ui.drawing.hidden = !run.drawing;
    ui.drawing.textContent = t('drawing') + '…';
}

function showPositions(run) {
    const p = tsv(utf8.decode(run.files['eval_positions.tsv']));
    const byLen = new Map();
    let maxPos = 0;
    for (const r of p.rows) {
        if (!byLen.has(r[1]))
            byLen.set(r[1], []);
        byLen.get(r[1])[Number(r[2]) - 1] = r[3];
        maxPos = Math.max(maxPos, Number(r[2]));
    }
    const head = [t('len') + ' \\ ' + t('position')];
    for (let i = 1; i <= maxPos; i++)
        head.push(String(i));
    const rows = [...byLen].map(([L, acc]) => {
        const r = [el('th', {scope: 'row', text: L})];
        for (let i = 0; i < maxPos; i++)
            r.push(acc[i] === undefined ? el('td') : heatCell(acc[i]));
        return r;
    });
    panel(run.ui.positions, t('by_position'), table(head, rows), run, ['positions']);
}

function showDecodeForm(run) {
    const d = run.ui.decode;
    const id = 'in-' + run.id;
    const input = el('input', {id, type: 'text', spellcheck: 'false',
                               value: d.querySelector('input') ? d.querySelector('input').value
                                   : run.config.task.startsWith('file:') ? '' : '3 1 4 1 5'});
    const go = el('button', {type: 'submit', text: t('decode_button')});
    const form = el('form', {}, el('label', {for: id, text: `${t('decode')} (${t('decode_help')})`}),
                    input, go);
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        run.ui.error.textContent = '';
        run.worker.postMessage({cmd: 'decode', input: input.value});
    });
    const out = d.querySelector('.decode-out') || el('div', {class: 'decode-out'});
    d.replaceChildren(el('h4', {text: t('decode')}), form, out);
    d.hidden = false;
}

// The decoded input of run (run.decoded: the text and trace files page_decode wrote):
// what the model decoded, then its attention maps or gates as figures, each with its
// caption, and every matrix as a table behind "numbers".
function showDecoded(run) {
    const {text, files} = run.decoded;
    const out = run.ui.decode.querySelector('.decode-out');
    const lines = Object.fromEntries(text.trim().split('\n').map((l) => l.split('\t')));
    const pre = el('p', {class: 'decoded'});
    pre.textContent = `${t('decoded')}: ${lines.decoded}` +
        (lines.target !== undefined ? `\n${t('target')}: ${lines.target}\n${t('correct')}: ${lines.correct}` : '');
    const names = Object.keys(files).sort();
    if (!names.length) {
        out.replaceChildren(pre);
        return;
    }
    const keep = out.querySelector('select');
    const sel = el('select', {id: 'mx-' + run.id});
    for (const n of names)
        sel.append(el('option', {value: n, text: n.replace(/\.tsv$/, '')}));
    if (keep && names.includes(keep.value))
        sel.value = keep.value;
    const box = el('div');
    const show = () => {
        const m = tsv(utf8.decode(files[sel.value]));
        const rows = m.rows.map((r) => [el('th', {scope: 'row', text: r[0]}),
                                        ...r.slice(1).map(heatCell)]);
        box.replaceChildren(table(m.head, rows));
    };
    sel.addEventListener('change', show);
    const tables = el('div', {}, el('label', {for: sel.id, text: t('matrix') + ' '}), sel, box);
    const maps = el('figure', {class: 'panel maps'});
    panel(maps, t('maps'), tables, run, run.maps || []);
    const wasOpen = out.querySelector('.maps details');
    if (wasOpen && wasOpen.open && maps.querySelector('details'))
        maps.querySelector('details').open = true;
    out.replaceChildren(pre, maps);
    show();
}

function download(name, bytes, type) {
    const url = URL.createObjectURL(new Blob([bytes], {type}));
    const a = el('a', {href: url, download: name});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// The entries of a run in a tar: RUN/FILE..., and the data file beside RUN when it has one.
function runEntries(run) {
    const entries = Object.entries(run.files).map(([p, b]) => [run.name + '/' + p, b]);
    if (run.data)
        entries.push([run.data.path, run.data.text]);
    return entries;
}

function showDownloads(run) {
    const tarBtn = el('button', {type: 'button', text: t('download_tar')});
    tarBtn.addEventListener('click', () =>
        download(run.name + '.tar', tarArchive(runEntries(run)), 'application/x-tar'));
    const kids = [tarBtn];
    if (run.files['model.ckpt']) {
        const ck = el('button', {type: 'button', text: t('download_ckpt')});
        ck.addEventListener('click', () =>
            download(run.name + '-model.ckpt', run.files['model.ckpt'], 'application/octet-stream'));
        kids.push(' ', ck);
    }
    run.ui.downloads.replaceChildren(...kids, el('br'), el('span', {class: 'muted', text: t('tar_help')}));
    run.ui.downloads.hidden = false;
}

// ---- the form ----------------------------------------------------------------------------
function formSettings() {
    const task = $('input[name=task]:checked').value;
    const models = [...document.querySelectorAll('input[name=model]:checked')].map((c) => c.value);
    const num = (id) => $(id).value.trim();
    if (!models.length)
        throw new Error(t('err_models'));
    let settings = `seed=${num('#seed')} steps=${num('#steps')} stop_acc=${num('#stop-acc')} ` +
        `log_every=${num('#log-every')}`;
    let data = null, short = task;
    if (task === 'file') {
        const text = $('#pairs').value;
        if (!text.trim())
            throw new Error(t('err_pairs'));
        data = {path: dataFile && dataFile.text === text ? dataFile.path : 'pairs.tsv', text};
        settings += ` task=file:${data.path}`;
        short = data.path.replace(/\.tsv$/, '');
    } else {
        if (Number(num('#train-min')) > Number(num('#train-max')))
            throw new Error(t('err_lengths'));
        settings += ` task=${task} train_min=${num('#train-min')} train_max=${num('#train-max')}`;
    }
    return {models, settings, data, short, preset: $('#preset').value, seed: num('#seed')};
}

let nextId = 1;
function startRuns(e) {
    e.preventDefault();
    $('#form-error').textContent = '';
    let f;
    try {
        f = formSettings();
    } catch (err) {
        $('#form-error').textContent = err.message;
        return;
    }
    for (const model of f.models) {
        const run = {id: nextId++, model, name: runName(model, f.short, f.seed), state: 'loading',
                     steps: Number($('#steps').value), data: f.data};
        runs.push(run);
        makeCard(run);
        setStatus(run, 'loading');
        render(run);
        startWorker(run, {cmd: 'start', dir: '/runs/' + run.name,
                          model, preset: f.preset, settings: f.settings, data: f.data});
    }
}

async function openCheckpoint() {
    const file = $('#ckpt-file').files[0];
    if (!file) {
        $('#form-error').textContent = t('err_ckpt');
        return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const dfile = $('#ckpt-data').files[0];
    const data = dfile ? {path: dfile.name, text: await dfile.text()} : null;
    const name = file.name.replace(/\.ckpt$/, '');
    const run = {id: nextId++, name, state: 'loading', opened: true, data};
    runs.push(run);
    makeCard(run);
    setStatus(run, 'loading');
    startWorker(run, {cmd: 'open', dir: '/runs/' + name, bytes, settings: '', data});
}

function setLang(l) {
    lang = l;
    document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
    for (const e of document.querySelectorAll('[data-t]'))
        e.textContent = t(e.dataset.t);
    document.title = t('title');
    for (const b of document.querySelectorAll('.lang button'))
        b.setAttribute('aria-pressed', String(b.dataset.lang === l));
    for (const r of runs) {
        render(r);
        if (r.decoded)
            showDecoded(r);
    }
    showAll();
}

function init() {
    $('#form').addEventListener('submit', startRuns);
    $('#stop-all').addEventListener('click', () => runs.forEach(stopRun));
    $('#download-all').addEventListener('click', () => {
        const entries = [];
        const seen = new Set();
        for (const r of runs.filter((x) => x.files))
            for (const [p, b] of runEntries(r))
                if (!seen.has(p)) {
                    seen.add(p);
                    entries.push([p, b]);
                }
        download('attnlab-runs.tar', tarArchive(entries), 'application/x-tar');
    });
    $('#open-ckpt').addEventListener('click', openCheckpoint);
    for (const r of document.querySelectorAll('input[name=task]'))
        r.addEventListener('change', () => {
            $('#own').hidden = $('input[name=task]:checked').value !== 'file';
        });
    $('#pairs-file').addEventListener('change', async () => {
        const file = $('#pairs-file').files[0];
        if (!file)
            return;
        const text = await file.text();
        dataFile = {path: file.name.replace(/[^A-Za-z0-9._-]/g, '_'), text};
        $('#pairs').value = text;
    });
    $('#preset').addEventListener('change', () => {
        $('#log-every').value = $('#preset').value === 'small' ? 25 : 100;
    });
    for (const b of document.querySelectorAll('.lang button'))
        b.addEventListener('click', () => setLang(b.dataset.lang));
    setLang(/^zh/.test(navigator.language || '') ? 'zh' : 'en');
}

init();
