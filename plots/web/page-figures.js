// page-figures.js — the page's figures: the project's own plots/*.gp drawn by gnuplot
// compiled to WebAssembly in a Worker of its own (figworker.js with figures.js), one
// script at a time and the most wanted first; a panel's figures with report.html's
// captions and the numbers behind "numbers"; the training curves drawn again while a run
// trains; and the comparison of every run of the page together, as `attnlab report`
// draws it. build-page.sh puts it after page-text.js and before page.js, in one <script>.
//
// Design. Everything drawn is what a comparison directory holds, written by the command
// line's own code in a run's Worker (page_compare, page_curves: common/web/web_compare.c)
// or in the Worker that merges every run (worker.js, cmd 'merge'); nothing here makes a
// table. Drawing costs a fresh gnuplot instance and the script's run (0.1 to 1 s) on
// the cores the runs train on, so drawing is one job at a time in order of priority
// (PRIO: a decoded input's maps first, then a run's final figures, then the comparison
// of all runs, the curves of runs still training last), a job not yet started gives way
// to a newer one of the same key, and a run still training asks for its curves again
// only after a pause that grows with what drawing them cost (LIVE_*). A figure drawn
// from an older job never replaces one of a newer job (each output keeps its job's id).
'use strict';

const $ = (sel, root) => (root || document).querySelector(sel);

function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {}))
        if (k === 'text')
            e.textContent = v;
        else
            e.setAttribute(k, v);
    for (const k of kids)
        if (k != null)
            e.append(k);
    return e;
}

// ---- TSV and tables ------------------------------------------------------------------------
function tsv(text) { // → {head: [...], rows: [[...], ...]}
    const lines = text.replace(/\n+$/, '').split('\n');
    return {head: lines[0].split('\t'), rows: lines.slice(1).map((l) => l.split('\t'))};
}
const utf8 = new TextDecoder();
const fmt = (x, d) => (Number.isFinite(Number(x)) ? Number(x).toFixed(d) : String(x));
const fileText = (files, name) => (files && files[name] ? utf8.decode(files[name]) : '');

function table(head, rows, rowClass) {
    const tb = el('tbody');
    rows.forEach((r, i) => {
        const tr = el('tr', rowClass ? {class: rowClass(r, i)} : {});
        for (const c of r)
            tr.append(c instanceof Node ? c : el('td', {text: String(c)}));
        tb.append(tr);
    });
    const tr = el('tr');
    for (const h of head)
        tr.append(el('th', {scope: 'col', text: h}));
    return el('table', {}, el('thead', {}, tr), tb);
}

// A cell shaded by its value (0 to 1): the number is shown, the shade only helps the eye.
function heatCell(v) {
    const x = Math.max(0, Math.min(1, Number(v)));
    const light = Math.round(100 - 55 * x);
    return el('td', {class: 'heat', style: `background:hsl(212,60%,${light}%);` +
                     (light < 60 ? 'color:#fff' : ''), text: fmt(v, 2)});
}

// ---- gnuplot in a Worker of its own, the scripts from the page -----------------------------
const figureUrl = URL.createObjectURL(new Blob(
    [$('#gnuplot-src').textContent, '\n', $('#figures-src').textContent, '\n',
     $('#figworker-src').textContent], {type: 'text/javascript'}));
const PRIO = {maps: 0, run: 1, all: 2, live: 3};
let figWorker = null, figNext = 1, figBusy = null;
const figQueue = [];
// What page_figures says: script -> {outputs, caption: {en, zh}}, output -> script, and
// model -> figure -> {en, zh}, the sentence a model's trace adds to the caption.
const FIG = {scripts: {}, of: {}, about: {}};

function readFigures(text) {
    if (Object.keys(FIG.scripts).length || !text)
        return;
    for (const line of text.split('\n')) {
        const c = line.split('\t');
        if (c[0] === 'figure') {
            FIG.scripts[c[1]] = {outputs: c[2].split(' '), caption: {en: c[3], zh: c[4]}};
            for (const o of c[2].split(' '))
                FIG.of[o] = c[1];
        } else if (c[0] === 'trace') {
            (FIG.about[c[1]] = FIG.about[c[1]] || {})[c[2]] = {en: c[3], zh: c[4]};
        }
    }
}

// Sends the most wanted job waiting (lowest priority number, then oldest) to gnuplot's
// Worker when it is free.
function pumpFigures() {
    if (figBusy || !figQueue.length)
        return;
    let best = 0;
    for (let k = 1; k < figQueue.length; k++)
        if (figQueue[k].priority < figQueue[best].priority)
            best = k;
    figBusy = figQueue.splice(best, 1)[0];
    figWorker.postMessage({id: figBusy.id, script: $('#gp-' + figBusy.name).textContent,
                           scriptName: figBusy.name, files: figBusy.files});
}

// Runs plots/NAME.gp on the files of a comparison directory; resolves to {svgs, ms, id},
// or to null when a newer job of the same key took its place before it started.
function drawScript(name, files, priority, key) {
    if (!figWorker) {
        figWorker = new Worker(figureUrl);
        figWorker.onmessage = (e) => {
            const job = figBusy;
            figBusy = null;
            if (e.data.error || e.data.status !== 0)
                job.reject(new Error(`${job.name}.gp: ${e.data.error || e.data.stderr}`));
            else
                job.resolve(Object.assign(e.data, {id: job.id}));
            pumpFigures();
        };
    }
    return new Promise((resolve, reject) => {
        const k = key ? figQueue.findIndex((j) => j.key === key) : -1;
        if (k >= 0)
            figQueue.splice(k, 1)[0].resolve(null);
        figQueue.push({id: figNext++, name, files, priority, key: key || null, resolve, reject});
        pumpFigures();
    });
}

// An SVG of gnuplot's as an element of the page: its ids made unique in the page (each
// figure defines the same ones), nothing before <svg>, no event attribute.
let svgSerial = 0;
function svgElement(text, label) {
    const pre = `f${++svgSerial}-`;
    const body = text.slice(text.indexOf('<svg'))
        .replace(/\son[a-z]+\s*=\s*("[^"]*"|'[^']*')/gi, '')
        .replace(/\bid=(['"])([^'"]+)\1/g, (m, q, id) => `id=${q}${pre}${id}${q}`)
        .replace(/url\(#([^)]+)\)/g, (m, id) => `url(#${pre}${id})`)
        .replace(/href=(['"])#([^'"]+)\1/g, (m, q, id) => `href=${q}#${pre}${id}${q}`);
    const box = el('div', {class: 'svg'});
    box.innerHTML = body;
    const svg = box.querySelector('svg');
    if (svg) {
        svg.setAttribute('role', 'img');
        svg.setAttribute('aria-label', label);
    }
    return box;
}

// report.html's caption of figure output (e.g. "accuracy", "attention_cross"), in the
// page's language, with the sentence the model (when one) adds to it.
function captionOf(model, output) {
    const s = FIG.scripts[FIG.of[output]];
    const about = model && FIG.about[model] && FIG.about[model][output];
    return [s && s.caption[lang], about && about[lang]].filter(Boolean).join(' ');
}

// The figure element of output drawn for target (a run, or the comparison of all runs;
// made once per drawing), with its caption; data-live says a run still training drew it.
function figureBlock(target, output) {
    const f = target.svgs && target.svgs[output];
    if (!f)
        return null;
    if (!f.node)
        f.node = svgElement(f.text, output);
    return el('div', {class: 'figure', 'data-figure': output, 'data-ms': String(Math.round(f.ms)),
                      'data-live': f.live ? '1' : '0'},
              f.node, el('p', {class: 'what', text: captionOf(target.config && target.config.model,
                                                               output)}));
}

// A panel: its title, the figures of outputs when drawn (each with its caption) and the
// numbers as a table, behind "numbers" once a figure stands above them.
function panel(fig, caption, body, target, outputs) {
    const figs = (outputs || []).map((o) => figureBlock(target, o)).filter(Boolean);
    if (!figs.length) {
        fig.replaceChildren(el('figcaption', {text: caption}), body);
        return;
    }
    const open = fig.querySelector('details') && fig.querySelector('details').open;
    const numbers = el('details', open ? {open: ''} : {}, el('summary', {text: t('numbers')}), body);
    fig.replaceChildren(el('figcaption', {text: caption}), ...figs, numbers);
}

// Draws the figures of scripts for target (a run, or the comparison of all runs) from a
// comparison directory (files) with gnuplot in WebAssembly, one script after another at
// priority, and calls shown() as each comes. A figure of an older job never replaces a
// newer one. Resolves to the milliseconds each script took.
async function figurePanels(target, files, scripts, priority, shown, live) {
    target.svgs = target.svgs || {};
    const times = {};
    target.drawing = (target.drawing || 0) + 1;
    shown();
    for (const name of scripts) {
        try {
            const key = live ? `live-${target.id}` : null;
            const r = await drawScript(name, files, priority, key);
            if (!r)
                continue;
            times[name] = r.ms;
            for (const [output, text] of Object.entries(r.svgs))
                if (!target.svgs[output] || target.svgs[output].id < r.id)
                    target.svgs[output] = {text, ms: r.ms, id: r.id, live: !!live};
            if (name === 'attention' || name === 'gates')
                target.maps = ['attention', 'gates'].flatMap((n) => FIG.scripts[n].outputs)
                    .filter((o) => target.svgs[o]);
        } catch (err) {
            if (target.ui && target.ui.error)
                target.ui.error.textContent = err.message;
        }
        shown();
    }
    target.drawing--;
    shown();
    return times;
}

// ---- the curves of a run still training ----------------------------------------------------
// The shortest pause between two drawings of one run's curves, and how many times the
// drawing's own time the pause is for each run training: gnuplot then takes at most a
// quarter of a core for every live figure together.
const LIVE_MIN_MS = 2000, LIVE_SHARE = 4;

// Asks run's Worker for its curves so far (worker.js, cmd 'curves') when it has logged
// two validations or more, none is asked already and its pause is over; a pause not yet
// over sets a timer for its end.
function askLiveCurves(run, busyRuns) {
    if (run.files || run.opened || run.liveAsked || !run.log || run.log.rows.length < 2)
        return;
    const now = performance.now();
    if (now < (run.liveNext || 0)) {
        if (!run.liveTimer)
            run.liveTimer = setTimeout(() => {
                run.liveTimer = null;
                askLiveCurves(run, busyRuns);
            }, run.liveNext - now);
        return;
    }
    run.liveAsked = true;
    run.worker.postMessage({cmd: 'curves'});
}

// The curves of run so far (files: what page_curves wrote), drawn last of all jobs; the
// next are asked for after the pause their drawing earns.
async function drawLiveCurves(run, files, busyRuns, shown) {
    run.liveAsked = false;
    if (!files || run.files)
        return;
    const times = await figurePanels(run, files, ['curves'], PRIO.live, shown, true);
    const ms = times.curves || 0;
    run.liveDraws = (run.liveDraws || 0) + (times.curves !== undefined ? 1 : 0);
    run.liveNext = performance.now() + Math.max(LIVE_MIN_MS, LIVE_SHARE * ms * busyRuns());
}

// ---- every run together ----------------------------------------------------------------------
// The scripts of a comparison of several runs, in the report's order (report_figures.c);
// each is drawn when its table has a row. With one run, those its card shows are left out.
const ALL_SCRIPTS = ['accuracy', 'positions', 'distance', 'bleu', 'sweep', 'curves', 'budget',
                     'capacity', 'cost'];
const CARD_SCRIPTS = ['accuracy', 'positions', 'curves'];
const all = {id: 'all', files: null, names: [], gen: 0, merging: false, dirty: false,
             worker: null};

// Starts a merge of every run that has its files (finished, or opened and evaluated) in
// the merging Worker; one at a time, the last asked for again when one is running.
function mergeAll(runList) {
    const ready = runList.filter((r) => r.files && r.files['eval.tsv']);
    if (!ready.length)
        return;
    if (all.merging) {
        all.dirty = true;
        return;
    }
    if (!all.worker) {
        all.worker = new Worker(workerUrl);
        all.worker.onmessage = (e) => onMerged(e.data, runList);
    }
    const seen = new Set();
    const list = ready.map((r) => {
        let name = r.name;
        for (let k = 2; seen.has(name); k++)
            name = `${r.name}-${k}`;
        seen.add(name);
        return {name, files: r.view || r.files};
    });
    all.merging = true;
    all.worker.postMessage({cmd: 'merge', runs: list});
}

function onMerged(m, runList) {
    if (m.type !== 'merged' && m.type !== 'error')
        return;
    all.merging = false;
    if (m.type === 'error') {
        $('#all-error').textContent = m.message;
    } else {
        $('#all-error').textContent = '';
        all.files = m.compare;
        all.names = m.names;
        const gen = ++all.gen;
        const rows = (s) => tsv(fileText(all.files, s + '.tsv') || 'x').rows.length > 0;
        const scripts = ALL_SCRIPTS.filter((s) => rows(s) &&
            (all.names.length > 1 || !CARD_SCRIPTS.includes(s)));
        for (const o of Object.keys(all.svgs || {}))
            if (!scripts.includes(FIG.of[o]))
                delete all.svgs[o];
        all.scripts = scripts;
        showAll();
        figurePanels(all, all.files, scripts, PRIO.all, () => gen === all.gen && showAll());
    }
    if (all.dirty) {
        all.dirty = false;
        mergeAll(runList);
    }
}

// The summary of every run (summary.tsv, with how each model's runs ended from
// convergence.tsv as its last column, as report.html shows it), then the figures.
function showAll() {
    if (!all.files)
        return;
    $('#all').hidden = false;
    const s = tsv(fileText(all.files, 'summary.tsv'));
    const conv = tsv(fileText(all.files, 'convergence.tsv') || 'model');
    const ci = (h) => conv.head.indexOf(h);
    const verdict = (g, column) => {
        const r = conv.rows.find((x) => x[ci('model')] === g);
        return r && ci(column) >= 0 ? r[ci(column)] : '';
    };
    const col = (h) => s.head.indexOf(h);
    const rows = [];
    let capped = false;
    s.rows.forEach((r, i) => {
        const g = r[col('model')], first = i === 0 || s.rows[i - 1][col('model')] !== g;
        const span = s.rows.filter((x) => x[col('model')] === g).length;
        const spread = r[col('seeds')] !== '1';
        const pm = (m, sd) => r[col(m)] + (spread ? ' ± ' + r[col(sd)] : '');
        const cells = [];
        if (first) {
            cells.push(el('th', {scope: 'row', rowspan: String(span), text: g}));
            for (const k of ['params', 'seeds', 'train_seconds_mean'])
                cells.push(el('td', {rowspan: String(span), text: r[col(k)]}));
        }
        cells.push(r[col('len')], pm('token_mean', 'token_sd'), pm('seq_mean', 'seq_sd'));
        if (first) {
            const v = verdict(g, 'verdict');
            capped = capped || /did not reach|plateau below/.test(v);
            const shown = (lang === 'zh' && verdict(g, 'verdict_zh')) || v;
            cells.push(el('td', {rowspan: String(span), class: 'verdict', text: shown}));
        }
        rows.push(cells);
    });
    const head = [t('sum_model'), t('sum_params'), t('sum_seeds'), t('sum_time'), t('sum_len'),
                  t('token_acc'), t('seq_acc'), t('sum_ended')];
    $('#all-summary').replaceChildren(el('h3', {text: t('summary')}), table(head, rows),
                                      capped ? el('p', {class: 'capped', text: t('capped')}) : '');
    const figs = [];
    for (const name of all.scripts || [])
        for (const o of (FIG.scripts[name] || {outputs: []}).outputs) {
            const f = figureBlock(all, o);
            if (f)
                figs.push(el('figure', {class: 'panel'}, f));
        }
    $('#all-figures').replaceChildren(...figs);
    $('#all').classList.toggle('drawing', !!all.drawing);
}
