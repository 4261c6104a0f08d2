// page.js — the page: settings in, one Worker per run, progress and stop, the evaluation
// by length and position, decoding an input with its attention maps or LSTM gates,
// downloads, a checkpoint opened; in English or Chinese (docs/zh/glossary.md's terms).
//
// Design. The page holds no model: each run is a Worker (worker.js after the WebAssembly
// module, both from the page's own <script type="text/plain"> blocks, through one Blob
// URL) that trains a chunk at a time and posts train_log.tsv after each chunk, then the
// run's files (the command line's formats). Everything shown is read from those files:
// the progress from train_log.tsv, the evaluation from eval.tsv and eval_positions.tsv,
// the decoded input's matrices from trace/*.tsv. The figures are the command line's:
// the run's Worker makes the comparison directory of the run with the C writers of
// `attnlab report` (page_compare), and one more Worker (figworker.js: gnuplot compiled
// to WebAssembly, with figures.js) runs the project's own plots/*.gp on it, as report
// does; figurePanels(run) asks for them and each panel shows its SVG inline, under it
// report.html's caption, and its numbers as a table behind "numbers". A panel shows the
// table alone until its figure comes (during training: the scripts read a finished run).
/* global tarArchive */
'use strict';

const TEXT = {
    en: {
        title: 'attnlab: three models side by side',
        intro: 'Each model trains in this browser, in a Worker of its own: nothing is installed and nothing is sent anywhere. The numbers are those of attnlab\'s command line, bit for bit.',
        setup: 'Set up', task: 'Task',
        task_copy: 'copy (the target is the source)',
        task_reverse: 'reverse (the target is the source backwards)',
        task_file: 'your own pairs',
        pairs_label: 'One example a line: SOURCE, a tab, TARGET (symbols separated by spaces)',
        pairs_file: 'or open a file (.tsv)',
        training: 'Training', train_min: 'shortest training length', train_max: 'longest training length',
        sizes: 'sizes', preset_small: 'small (trains in seconds)',
        preset_defaults: 'the command line\'s (canonical sizes)', seed: 'seed',
        steps: 'at most this many steps', stop_acc: 'stop at validation token accuracy',
        log_every: 'validate every (steps)', models: 'Models', m_rnn: 'RNN with attention',
        train: 'Train', stop_all: 'Stop all', download_all: 'Download every run (.tar)',
        open: 'Open a checkpoint trained on the command line',
        open_help: 'A model.ckpt or last.ckpt that attnlab train wrote. A run on your own pairs also needs its data file.',
        open_ckpt: 'checkpoint', open_data: 'data file (own pairs only)', open_button: 'Open',
        runs: 'Runs', no_runs: 'No run yet: choose a task and press Train.',
        footer: 'attnlab: the same C code as the command line, compiled to WebAssembly.',
        loading: 'loading', training_now: 'training', evaluating: 'evaluating',
        done: 'finished', stopped: 'stopped', failed: 'failed', opened: 'opened from a checkpoint',
        stop: 'Stop', step: 'step', loss: 'loss', tf_acc: 'teacher-forced token accuracy',
        lr: 'learning rate', val_acc: 'validation token accuracy', seconds: 'seconds',
        params: 'parameters', curves: 'Training', by_length: 'Accuracy by length (greedy decoding)',
        len: 'length', samples: 'samples', token_acc: 'token accuracy', seq_acc: 'sequence accuracy',
        in_range: 'inside the training range (shaded)', by_position: 'Accuracy by output position',
        position: 'output position', decode: 'Decode an input', decode_help: 'source symbols, separated by spaces',
        decode_button: 'Decode', decoded: 'decoded', target: 'target', correct: 'correct',
        trace: 'Attention maps and gates of this input', matrix: 'matrix',
        download_tar: 'Download the run (.tar)', download_ckpt: 'Download model.ckpt',
        tar_help: 'tar xf the file; then attnlab eval --checkpoint RUN/model.ckpt, or attnlab report, read it.',
        err_models: 'Choose at least one model.', err_pairs: 'Paste or open your pairs first.',
        err_lengths: 'The shortest training length must not exceed the longest.',
        err_ckpt: 'Choose a checkpoint file first.', stopped_at: 'stopped by you after step',
        best: 'model.ckpt holds the weights of the best validation, step',
        rule_target: 'reached the target accuracy', rule_converged: 'a plateau',
        rule_budget: 'ran its steps', numbers: 'numbers',
        maps: 'The attention maps and gates of this input', drawing: 'drawing the figures',
    },
    zh: {
        title: 'attnlab：三个模型并排训练',
        intro: '每个模型都在这个浏览器里、在各自的 Worker 中训练：不用安装任何东西，也不向任何地方发送数据。得到的数与 attnlab 命令行的逐位相同。',
        setup: '设置', task: '任务',
        task_copy: '复制任务（目标序列就是源序列）',
        task_reverse: '反转任务（目标序列是倒过来的源序列）',
        task_file: '你自己的例子',
        pairs_label: '每行一个例子：源序列、一个制表符、目标序列（符号之间用空格分开）',
        pairs_file: '或者打开一个文件（.tsv）',
        training: '训练', train_min: '最短训练长度', train_max: '最长训练长度',
        sizes: '尺寸', preset_small: '小（几秒钟训练完）', preset_defaults: '命令行的（标准尺寸）',
        seed: '种子', steps: '最多训练步数', stop_acc: '验证逐词准确率达到此值时停止',
        log_every: '每隔多少训练步验证一次', models: '模型', m_rnn: '带注意力的 RNN',
        train: '训练', stop_all: '全部停止', download_all: '下载全部运行（.tar）',
        open: '打开在命令行上训练的检查点',
        open_help: 'attnlab train 写出的 model.ckpt 或 last.ckpt。用你自己的例子训练的运行还需要它的数据文件。',
        open_ckpt: '检查点', open_data: '数据文件（仅限自己的例子）', open_button: '打开',
        runs: '运行', no_runs: '还没有运行：选择一个任务，然后点“训练”。',
        footer: 'attnlab：与命令行相同的 C 代码，编译为 WebAssembly。',
        loading: '加载中', training_now: '训练中', evaluating: '评估中',
        done: '已完成', stopped: '已停止', failed: '失败', opened: '从检查点打开',
        stop: '停止', step: '训练步', loss: '损失', tf_acc: '教师强制准确率',
        lr: '学习率', val_acc: '验证逐词准确率', seconds: '秒', params: '参数',
        curves: '训练', by_length: '各长度的准确率（贪心解码）', len: '长度', samples: '例子数',
        token_acc: '逐词准确率', seq_acc: '整序列准确率', in_range: '训练范围之内（底色）',
        by_position: '各输出位置的准确率', position: '输出位置', decode: '解码一个输入',
        decode_help: '源序列的符号，用空格分开', decode_button: '解码', decoded: '解码结果',
        target: '目标序列', correct: '正确', trace: '这个输入的注意力权重与门', matrix: '矩阵',
        download_tar: '下载这次运行（.tar）', download_ckpt: '下载 model.ckpt',
        tar_help: '用 tar xf 解开；attnlab eval --checkpoint RUN/model.ckpt 或 attnlab report 可以读取它。',
        err_models: '请至少选择一个模型。', err_pairs: '请先粘贴或打开你的例子。',
        err_lengths: '最短训练长度不能大于最长训练长度。', err_ckpt: '请先选择一个检查点文件。',
        stopped_at: '由你停止于训练步', best: 'model.ckpt 保存最佳验证时的权重，训练步',
        rule_target: '达到了目标准确率', rule_converged: '收敛（平台期）', rule_budget: '跑完了全部训练步',
        numbers: '数值', maps: '这个输入的注意力权重与门', drawing: '正在画图',
    },
};

let lang = 'en';
const t = (key) => TEXT[lang][key] || TEXT.en[key] || key;
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

// ---- the Workers' code: the module and worker.js, from the page itself ----------------
const workerUrl = URL.createObjectURL(new Blob(
    [$('#core-src').textContent, '\n', $('#worker-src').textContent],
    {type: 'text/javascript'}));

// ---- the figures: gnuplot in a Worker of its own, the scripts from the page -----------
const figureUrl = URL.createObjectURL(new Blob(
    [$('#gnuplot-src').textContent, '\n', $('#figures-src').textContent, '\n',
     $('#figworker-src').textContent], {type: 'text/javascript'}));
let figWorker = null, figJobs = new Map(), figNext = 1;
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

// Runs plots/NAME.gp on the files of a comparison directory; resolves to {svgs, ms}.
function drawScript(name, files) {
    if (!figWorker) {
        figWorker = new Worker(figureUrl);
        figWorker.onmessage = (e) => {
            const job = figJobs.get(e.data.id);
            figJobs.delete(e.data.id);
            if (e.data.error || e.data.status !== 0)
                job.reject(new Error(`${job.name}.gp: ${e.data.error || e.data.stderr}`));
            else
                job.resolve(e.data);
        };
    }
    const id = figNext++;
    return new Promise((resolve, reject) => {
        figJobs.set(id, {name, resolve, reject});
        figWorker.postMessage({id, script: $('#gp-' + name).textContent, scriptName: name,
                               files});
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

// ---- TSV -------------------------------------------------------------------------------
function tsv(text) { // → {head: [...], rows: [[...], ...]}
    const lines = text.replace(/\n+$/, '').split('\n');
    return {head: lines[0].split('\t'), rows: lines.slice(1).map((l) => l.split('\t'))};
}
const utf8 = new TextDecoder();
const fmt = (x, d) => (Number.isFinite(Number(x)) ? Number(x).toFixed(d) : String(x));

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

function onMessage(run, m) {
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
    } else if (m.type === 'evaluating') {
        setStatus(run, 'evaluating');
    } else if (m.type === 'files') {
        run.files = m.files;
        if (m.compare)
            figurePanels(run, m.compare, ['curves', 'accuracy', 'positions']);
        setStatus(run, run.opened ? 'opened' : run.ended === 'stopped' ? 'stopped'
            : run.ended === 'failed' ? 'failed' : 'done');
        render(run);
    } else if (m.type === 'decoded') {
        run.decoded = {text: m.text, files: m.files};
        run.maps = [];
        showDecoded(run);
        if (m.compare)
            figurePanels(run, m.compare, ['attention', 'gates']);
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

// report.html's caption of figure output (e.g. "accuracy", "attention_cross"), in the
// page's language, with the sentence the run's model adds to it.
function captionOf(run, output) {
    const s = FIG.scripts[FIG.of[output]];
    const about = run.config && FIG.about[run.config.model] &&
        FIG.about[run.config.model][output];
    return [s && s.caption[lang], about && about[lang]].filter(Boolean).join(' ');
}

// The figure element of output drawn for run (made once per drawing), with its caption.
function figureBlock(run, output) {
    const f = run.svgs && run.svgs[output];
    if (!f)
        return null;
    if (!f.node)
        f.node = svgElement(f.text, output);
    return el('div', {class: 'figure', 'data-figure': output, 'data-ms': String(Math.round(f.ms))},
              f.node, el('p', {class: 'what', text: captionOf(run, output)}));
}

// A panel: its title, the figures of outputs when drawn (each with its caption) and the
// numbers as a table, behind "numbers" once a figure stands above them.
function panel(fig, caption, body, run, outputs) {
    const figs = (outputs || []).map((o) => figureBlock(run, o)).filter(Boolean);
    if (!figs.length) {
        fig.replaceChildren(el('figcaption', {text: caption}), body);
        return;
    }
    const open = fig.querySelector('details') && fig.querySelector('details').open;
    const numbers = el('details', open ? {open: ''} : {}, el('summary', {text: t('numbers')}), body);
    fig.replaceChildren(el('figcaption', {text: caption}), ...figs, numbers);
}

// Draws the figures of scripts for run from its comparison directory (files: what
// page_compare wrote) with gnuplot in WebAssembly, one script after another, and shows
// each panel again as its figures come. Returns a promise of the milliseconds each script
// took.
async function figurePanels(run, files, scripts) {
    run.svgs = run.svgs || {};
    const times = {};
    run.drawing = (run.drawing || 0) + 1;
    render(run);
    for (const name of scripts) {
        try {
            const r = await drawScript(name, files);
            times[name] = r.ms;
            for (const [output, text] of Object.entries(r.svgs))
                run.svgs[output] = {text, ms: r.ms};
            if (name === 'attention' || name === 'gates')
                run.maps = (run.maps || []).concat(Object.keys(r.svgs).sort(
                    (a, b) => FIG.scripts[name].outputs.indexOf(a) -
                        FIG.scripts[name].outputs.indexOf(b)));
        } catch (err) {
            run.ui.error.textContent = err.message;
        }
        render(run);
        if (run.decoded)
            showDecoded(run);
    }
    run.drawing--;
    run.figureTimes = Object.assign(run.figureTimes || {}, times);
    render(run);
    return times;
}

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
        panel(ui.curves, t('curves'), table([t('step'), t('loss'), t('tf_acc'), t('lr'),
                                             t('val_acc')], rows), run, ['curves']);
    }
    if (run.files && run.files['build.tsv']) {
        const b = Object.fromEntries(tsv(utf8.decode(run.files['build.tsv'])).rows);
        const why = run.ended === 'stopped' ? `${t('stopped_at')} ${b.train_steps}`
            : t('rule_' + b.stopped);
        ui.status.textContent += ` — ${why}; ${t('best')} ${b.best_step}.`;
    }
    if (run.files && run.files['eval.tsv']) {
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
