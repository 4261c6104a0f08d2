// page.js — drives the page's entry point (common/web/web_page.c, built as
// build/web/attnlab_core.js) under node, the way the page's Worker does: a run made from
// settings, trained in chunks, finished and evaluated, its files copied out of the
// module's in-memory file system.
//
// usage: node tests/web/page.js CORE_JS train OUT_DIR [STEPS]
//          every model trained STEPS (60) steps, seed 1, lengths 3..9, validating every
//          10 steps and trained in chunks of 7 steps (so a chunk's end is never a log
//          line's); then the same on a data file (OUT_DIR/pairs.tsv, made here) with
//          lstm. Writes OUT_DIR/NAME/ (the run's files) and OUT_DIR/runs.tsv: NAME, then
//          the attnlab flags of the same run (its args.txt without --out).
//        node tests/web/page.js CORE_JS figures GNUPLOT_JS OUT_DIR
//          every model at the small preset for 100 steps (copy 3..6), finished, evaluated
//          and made to decode "2 7 1 8"; each run's comparison directory made by
//          page_compare, and every figure the page draws (curves, accuracy, positions,
//          and attention or gates) drawn from it by the plots/*.gp scripts in
//          gnuplot-wasm (plots/web/figures.js): each must be an SVG with its content
//          (the lines, chance and the training range marked, a heat map with one cell per
//          query and key of each head). Also: the curves of each run after two
//          validations, from page_curves, while it trains; the Transformer's model.ckpt
//          opened as a checkpoint (page_open), staged (page_stage) and drawn; and every
//          run merged into one comparison, drawn with the three models. Writes
//          OUT_DIR/NAME/FIGURE.svg and prints the milliseconds each script took.
//        node tests/web/page.js CORE_JS bench PRESET [STEPS]
//          training steps per second of each model at PRESET (small or defaults): STEPS
//          (20) steps in one chunk, the rate from train_log.tsv's seconds (training
//          time, validation left out)
// Exit status: 0, 1 when a run fails, 2 for bad usage.
'use strict';
const fs = require('fs');
const path = require('path');
const {pageApi, filesOf, heatCells, checker} = require('./helper.js');

function usage() {
    process.stderr.write('usage: node tests/web/page.js CORE_JS train OUT_DIR [STEPS] | ' +
        'figures GNUPLOT_JS OUT_DIR | bench PRESET [STEPS]\n');
    process.exit(2);
}

// Copies directory dir of the module's file system to out on disk.
function copyOut(M, dir, out) {
    fs.mkdirSync(out, {recursive: true});
    for (const name of M.FS.readdir(dir)) {
        if (name === '.' || name === '..')
            continue;
        const p = dir + '/' + name;
        if (M.FS.isDir(M.FS.stat(p).mode))
            copyOut(M, p, path.join(out, name));
        else
            fs.writeFileSync(path.join(out, name), M.FS.readFile(p));
    }
}

// A data file of pairs: the source's words reversed, from a fixed little generator.
function pairsText() {
    const words = ['ant', 'bee', 'cat', 'dog', 'eel', 'fox', 'gnu'];
    let s = 12345, text = '# made by tests/web/page.js\n';
    const next = () => (s = (s * 1103515245 + 12345) % 2147483648);
    for (let k = 0; k < 400; k++) {
        const n = 2 + next() % 6, src = [];
        for (let i = 0; i < n; i++)
            src.push(words[next() % words.length]);
        text += src.join(' ') + '\t' + src.slice().reverse().join(' ') + '\n';
    }
    return text;
}

function fail(P, what) {
    process.stderr.write('page.js: ' + what + ': ' + P.error() + '\n');
    process.exit(1);
}

// Trains run h to its end in chunks of `chunk` steps; returns the chunks taken.
function trainAll(P, h, chunk, name) {
    let rc, chunks = 0;
    while ((rc = P.train(h, chunk)) === 0)
        chunks++;
    if (rc < 0)
        fail(P, name + ': training');
    return chunks + 1;
}

function train(M, P, out, steps) {
    fs.rmSync(out, {recursive: true, force: true});
    fs.mkdirSync(out, {recursive: true});
    // the data file at the same relative path in the module's file system and on disk,
    // so the task's name in config.tsv (and in the checkpoint) is the same for both
    const data = path.join(out, 'pairs.tsv');
    const text = pairsText();
    fs.writeFileSync(data, text);
    M.FS.mkdirTree(path.dirname(data));
    M.FS.writeFile(data, text);
    const runs = [];
    for (const model of ['lstm', 'rnn_attention', 'transformer'])
        runs.push([model + '-page', `model=${model} steps=${steps} seed=1 train_min=3 ` +
                   'train_max=9 log_every=10 eval_lengths=4 samples=1']);
    runs.push(['lstm-pairs', `model=lstm task=file:${data} steps=${steps} seed=1 ` +
               'log_every=10 hidden=32 embed=8']);
    const lines = [];
    for (const [name, settings] of runs) {
        const dir = '/runs/' + name;
        const h = P.create(dir, settings);
        if (!h)
            fail(P, name);
        const chunks = trainAll(P, h, 7, name);
        if (P.finish(h) !== 0 || P.evaluate(h) !== 0)
            fail(P, name + ': finishing');
        P.close(h);
        copyOut(M, dir, path.join(out, name));
        const args = M.FS.readFile(dir + '/args.txt', {encoding: 'utf8'}).split('\n');
        const flags = [];
        for (let i = 0; i < args.length; i++) {
            if (args[i] === '--out')
                i++;
            else if (args[i] !== '')
                flags.push(args[i]);
        }
        lines.push(name + '\t' + flags.join(' '));
        process.stdout.write(`trained ${name} in ${chunks} chunks (${flags.join(' ')})\n`);
    }
    fs.writeFileSync(path.join(out, 'runs.tsv'), lines.join('\n') + '\n');
}

async function figures(M, P, gnuplotJs, out) {
    const AttnGnuplot = require(path.resolve(gnuplotJs));
    process.setMaxListeners(0); // each instance of gnuplot's module listens on process
    const {renderFigure} = require(path.resolve(__dirname, '../../plots/web/figures.js'));
    const plots = path.resolve(__dirname, '../../plots');
    fs.rmSync(out, {recursive: true, force: true});
    const {check, failures} = checker('figures');
    // draws plots/NAME.gp from files (a comparison directory): {svgs, status, stderr, ms}
    const draw = async (script, files) => {
        const t0 = process.hrtime.bigint();
        const r = await renderFigure(AttnGnuplot, {
            script: fs.readFileSync(path.join(plots, script + '.gp'), 'utf8'),
            scriptName: script, files});
        return Object.assign(r, {ms: Number(process.hrtime.bigint() - t0) / 1e6});
    };
    // the captions: one line per figure script the page draws
    const table = P.figures();
    for (const s of ['curves', 'accuracy', 'positions', 'attention', 'gates'])
        check(new RegExp(`^figure\t${s}\t[^\t]+\t[^\t]{40,}\t[^\t]{20,}$`, 'm').test(table),
              `page_figures gives ${s} its captions in English and Chinese`);
    // the size presets: the small sizes or none, batches of 16 for the command line's
    // sizes, the page's recipe for both; nothing for a preset or model it does not know
    const recipe = /(^| )lr=0\.003 lr_schedule=cosine decay_steps=2000$/;
    for (const model of ['lstm', 'rnn_attention', 'transformer']) {
        const small = P.preset(model, 'small'), defaults = P.preset(model, 'defaults');
        check(recipe.test(small) && /^(embed|d_model)=\d+ /.test(small) && !/batch=/.test(small),
              `the small preset of ${model} sets its small sizes and the page's recipe ('${small}')`);
        check(defaults === 'batch=16 lr=0.003 lr_schedule=cosine decay_steps=2000',
              `the command line's sizes of ${model}: batches of 16, the page's recipe ('${defaults}')`);
        check(P.preset(model, 'large') === '', `no preset 'large' for ${model}`);
    }
    check(P.preset('gru', 'small') === '', 'no preset for a model the registry lacks');
    const expect = {
        lstm: ['gates'],
        rnn_attention: ['attention_rnn'],
        transformer: ['attention_enc_self', 'attention_dec_self', 'attention_cross'],
    };
    for (const model of ['lstm', 'rnn_attention', 'transformer']) {
        const dir = '/fig/' + model;
        const h = P.create(dir, `model=${model} ${P.preset(model, 'small')} steps=100 seed=1 ` +
                           'train_min=3 train_max=6 log_every=25');
        if (!h)
            fail(P, model);
        // while it trains: the curves so far, from its log alone (page_curves)
        for (let k = 0; k < 2; k++)
            if (P.train(h, 1) !== 0)
                fail(P, model + ': training');
        if (P.curves(dir, '/live' + dir) !== 0)
            fail(P, model + ': page_curves');
        const live = filesOf(M, '/live' + dir);
        const liveSvg = await draw('curves', live);
        const logged = Buffer.from(live['curves.tsv']).toString('utf8').trim().split('\n').length - 1;
        check(liveSvg.status === 0 && /<path/.test(liveSvg.svgs.curves || '') && logged === 2 &&
              !live['accuracy.tsv'], `${model}: the curves of 2 validations drawn while it trains ` +
              `(${liveSvg.ms.toFixed(0)} ms)`);
        trainAll(P, h, 1, model);
        if (P.finish(h) !== 0 || P.evaluate(h) !== 0 || P.decode(h, '2 7 1 8') !== 0)
            fail(P, model + ': finishing');
        if (P.compare(dir, '/compare' + dir) !== 0)
            fail(P, model + ': page_compare');
        const files = filesOf(M, '/compare' + dir);
        const vars = Buffer.from(files['trace/' + model + '/trace_vars.gp'] || []).toString('utf8');
        fs.mkdirSync(path.join(out, model), {recursive: true});
        const drawn = {};
        for (const script of ['curves', 'accuracy', 'positions', 'attention', 'gates']) {
            const r = await draw(script, files);
            check(r.status === 0, `${model}: ${script}.gp ran (${r.ms.toFixed(0)} ms)${r.status ? ': ' + r.stderr : ''}`);
            for (const [fig, svg] of Object.entries(r.svgs)) {
                drawn[fig] = svg;
                fs.writeFileSync(path.join(out, model, fig + '.svg'), svg);
            }
        }
        const svg = (f) => drawn[f] || '';
        check(/<\/svg>\s*$/.test(svg('curves')) && /<path/.test(svg('curves')) &&
              svg('curves').includes(model), `${model}: curves.svg draws the model's curves`);
        check(/chance = 1\/\d+/.test(svg('accuracy')) && /trained on L = 3–6/.test(svg('accuracy')),
              `${model}: accuracy.svg marks chance and the training range`);
        check(/<path/.test(svg('positions')) && svg('positions').includes(model),
              `${model}: positions.svg draws the positions`);
        for (const fig of expect[model]) {
            // one cell per query and key of each head (dec_self: the keys up to the query)
            const kind = fig.replace(/^attention_/, '');
            const stems = kind === 'rnn' ? ['alignment'] : kind === 'gates' ? [] :
                [...vars.matchAll(new RegExp(`^tr_(${kind}_l\\d+_h\\d+)_nx = `, 'gm'))].map((m) => m[1]);
            const dim = (stem, ax) => +(vars.match(new RegExp(`^tr_${stem}_${ax} = (\\d+)$`, 'm')) || [0, 0])[1];
            let cells = 0;
            for (const st of stems)
                cells += kind === 'dec_self' ? dim(st, 'ny') * (dim(st, 'ny') + 1) / 2
                    : dim(st, 'nx') * dim(st, 'ny');
            if (fig === 'gates')
                cells = 4 * Math.min(8, dim('enc_gate_f', 'nx')) *
                    (dim('enc_gate_f', 'ny') + dim('dec_gate_f', 'ny'));
            const got = heatCells(svg(fig));
            check(cells > 0 && got === cells && /<text[^>]*>[\s\S]*?7/.test(svg(fig)),
                  `${model}: ${fig}.svg has ${got} cells, ${cells} expected for "2 7 1 8"`);
        }
        P.close(h);
    }
    // a checkpoint opened (the Transformer's model.ckpt, as one of the command line's),
    // evaluated and decoding an input: staged for the merge by page_stage, then drawn
    const h = P.open('/fig/transformer/model.ckpt', '/opened/transformer', 'samples=32');
    if (!h || P.evaluate(h) !== 0 || P.decode(h, '2 7 1 8') !== 0)
        fail(P, 'the checkpoint opened');
    if (P.stage(h, '/stage/opened') !== 0 || P.compare('/stage/opened', '/compare/opened') !== 0)
        fail(P, 'the checkpoint opened: page_stage and page_compare');
    const opened = filesOf(M, '/compare/opened');
    for (const [script, fig] of [['accuracy', 'accuracy'], ['positions', 'positions'],
                                 ['attention', 'attention_cross']]) {
        const r = await draw(script, opened);
        check(r.status === 0 && /<path|<polygon/.test(r.svgs[fig] || ''),
              `the checkpoint opened: ${fig}.svg drawn (${r.ms.toFixed(0)} ms)${r.status ? ': ' + r.stderr : ''}`);
    }
    P.close(h);
    // every run together, the checkpoint's evaluation a second run of the Transformer
    const allRuns = ['/fig/lstm', '/fig/rnn_attention', '/fig/transformer', '/stage/opened'];
    if (P.compare(allRuns.join('\n'), '/compare/all') !== 0)
        fail(P, 'every run together');
    const together = filesOf(M, '/compare/all');
    const summary = Buffer.from(together['summary.tsv']).toString('utf8');
    check(/^transformer\t\d+\t2\t/m.test(summary) && /^lstm\t\d+\t1\t/m.test(summary),
          'every run together: the checkpoint joins the Transformer as its second run');
    for (const script of ['accuracy', 'budget']) {
        const r = await draw(script, together);
        const svg = r.svgs[script] || '';
        check(r.status === 0 && ['lstm', 'rnn_attention', 'transformer'].every((m) => svg.includes(m)),
              `every run together: ${script}.svg draws the three models (${r.ms.toFixed(0)} ms)`);
    }
    process.exit(failures.length ? 1 : 0);
}

function bench(M, P, preset, steps) {
    process.stdout.write('model\tpreset\tsteps\tsteps_per_s\n');
    for (const model of ['lstm', 'rnn_attention', 'transformer']) {
        const dir = '/bench/' + model;
        const h = P.create(dir, `model=${model} ${P.preset(model, preset)} steps=${steps} ` +
                           `log_every=${steps}`);
        if (!h)
            fail(P, model);
        trainAll(P, h, steps, model);
        const log = M.FS.readFile(dir + '/train_log.tsv', {encoding: 'utf8'}).trim().split('\n');
        const last = log[log.length - 1].split('\t');
        const rate = Number(last[0]) / Number(last[1]);
        process.stdout.write(`${model}\t${preset}\t${steps}\t${rate.toFixed(2)}\n`);
        P.close(h);
    }
}

const argv = process.argv.slice(2);
if (argv.length < 3)
    usage();
if (argv[1] === 'figures') {
    if (argv.length !== 4)
        usage();
    require(path.resolve(argv[0]))().then((M) => {
        const P = pageApi(M);
        P.init();
        return figures(M, P, argv[2], argv[3]);
    }).catch((e) => {
        process.stderr.write('page.js: ' + (e && e.stack || e) + '\n');
        process.exit(1);
    });
} else {
const steps = Number(argv[3] || (argv[1] === 'train' ? 60 : 20));
if (!Number.isInteger(steps) || steps < 1 || (argv[1] !== 'train' && argv[1] !== 'bench') ||
    (argv[1] === 'bench' && argv[2] !== 'small' && argv[2] !== 'defaults'))
    usage();
require(path.resolve(argv[0]))().then((M) => {
    const P = pageApi(M);
    P.init();
    if (argv[1] === 'train')
        train(M, P, argv[2], steps);
    else
        bench(M, P, argv[2], steps);
});
}
