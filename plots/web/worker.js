// worker.js — one run of the page, in a Web Worker: the page's entry point
// (common/web/web_page.c, compiled to WebAssembly as AttnlabCore) driven a chunk of
// training steps at a time, so that a "stop" message is read between two chunks; or the
// merge of every finished run of the page into one comparison.
//
// build-page.sh puts this file after the module's own JavaScript; the page starts it from
// a Blob URL (nothing is fetched). Messages in: {cmd: 'start', dir, model, preset,
// settings, data} (data: {path, text} of a data file, or null), {cmd: 'open', dir, bytes,
// settings, data}, {cmd: 'stop'}, {cmd: 'curves'} (the comparison of the run so far),
// {cmd: 'decode', input}, {cmd: 'merge', runs} (runs: [{name, files}], each a run
// directory as page_compare reads it). Messages out: {type: 'ready', models, figures}
// (page_figures: the figure scripts and their captions), {type: 'created', config},
// {type: 'progress', log} (train_log.tsv so far), {type: 'curves', compare} (what
// page_curves made of the run so far: curves.tsv, figure_vars.gp; null once training is
// over), {type: 'trained', state}, {type: 'files', files, compare, view} ({path:
// Uint8Array}: the run's files; the comparison directory page_compare made of the run,
// what the figure scripts read; and, for a run opened from a checkpoint, the run as the
// merge reads it, page_stage's copy), {type: 'decoded', text, files, compare, view} (the
// trace of the input, and the comparison made again with it), {type: 'merged', compare,
// names} (the comparison of the runs named), {type: 'error', where, message}.
/* global AttnlabCore */
'use strict';
(function () {
    let M = null, P = null, run = 0, dir = '', stopping = false, queue = [], opened = false;
    let training = false;
    // Steps a chunk trains before it pauses at the next validation: the page hears from
    // the run (and a stop takes effect) at every validation
    const CHUNK = 1;

    const post = (m, transfer) => self.postMessage(m, transfer || []);
    const fail = (where) => post({type: 'error', where, message: P.error()});

    function readTree(d, prefix, out) {
        for (const name of M.FS.readdir(d)) {
            if (name === '.' || name === '..')
                continue;
            const p = d + '/' + name;
            if (M.FS.isDir(M.FS.stat(p).mode))
                readTree(p, prefix + name + '/', out);
            else
                out[prefix + name] = M.FS.readFile(p);
        }
        return out;
    }

    function text(p) {
        return M.FS.readFile(p, {encoding: 'utf8'});
    }

    function writeData(data) {
        if (!data)
            return;
        const slash = data.path.lastIndexOf('/');
        if (slash > 0)
            M.FS.mkdirTree(data.path.slice(0, slash));
        M.FS.writeFile(data.path, data.text);
    }

    // Removes directory d of the module's file system and everything under it.
    function removeTree(d) {
        if (!M.FS.analyzePath(d).exists)
            return;
        for (const name of M.FS.readdir(d)) {
            if (name === '.' || name === '..')
                continue;
            const p = d + '/' + name;
            if (M.FS.isDir(M.FS.stat(p).mode))
                removeTree(p);
            else
                M.FS.unlink(p);
        }
        M.FS.rmdir(d);
    }

    // The directory page_compare reads for this run: its own, or for a run opened from a
    // checkpoint the copy page_stage writes with what the merge needs beside it.
    function runView() {
        if (!opened)
            return dir;
        const view = '/stage' + dir;
        if (P.stage(run, view) !== 0) {
            post({type: 'error', where: 'compare', message: P.error()});
            return null;
        }
        return view;
    }

    // The comparison directory of the run, made by the command line's own writers
    // (page_compare: curves.tsv, accuracy.tsv, positions.tsv, budget.tsv, trace/MODEL/,
    // figure_vars.gp, ...), outside the run's folder so that its download holds the run
    // only; with the staged copy of a run opened from a checkpoint (view). null (the
    // reason posted) when it could not be made.
    function compare() {
        const src = runView(), out = '/compare' + dir;
        if (!src)
            return {compare: null, view: null};
        if (P.compare(src, out) !== 0) {
            post({type: 'error', where: 'compare', message: P.error()});
            return {compare: null, view: null};
        }
        return {compare: readTree(out, '', {}), view: opened ? readTree(src, '', {}) : null};
    }

    // The curves of the run so far (page_curves: what plots/curves.gp reads), made anew
    // in a folder of their own.
    function liveCurves() {
        const out = '/live' + dir;
        if (!training)
            return null;
        removeTree(out);
        if (P.curves(dir, out) !== 0)
            return null; // no validation logged yet: nothing to draw
        return readTree(out, '', {});
    }

    // Every run of the page in one comparison: each run's files written under
    // /all/runs/NAME (the folder cleared first), merged by page_compare into /all/compare.
    function merge(list) {
        removeTree('/all');
        const dirs = [];
        for (const r of list) {
            const d = '/all/runs/' + r.name;
            for (const [p, bytes] of Object.entries(r.files)) {
                const slash = p.lastIndexOf('/');
                M.FS.mkdirTree(slash > 0 ? d + '/' + p.slice(0, slash) : d);
                M.FS.writeFile(d + '/' + p, bytes);
            }
            dirs.push(d);
        }
        if (P.compare(dirs.join('\n'), '/all/compare') !== 0) {
            post({type: 'error', where: 'merge', message: P.error()});
            return;
        }
        post({type: 'merged', compare: readTree('/all/compare', '', {}),
              names: list.map((r) => r.name)});
    }

    // The files of the run, sent once training and evaluation are over.
    function sendFiles() {
        const c = compare();
        post({type: 'files', files: readTree(dir, '', {}), compare: c.compare, view: c.view});
    }

    function evaluate() {
        post({type: 'evaluating'});
        // let the message go out before the evaluation holds the Worker
        setTimeout(() => {
            if (P.evaluate(run) !== 0)
                fail('evaluate');
            sendFiles();
        }, 0);
    }

    function finish(state) {
        training = false;
        if (P.finish(run) !== 0) {
            fail('finish');
            return;
        }
        post({type: 'trained', state, log: text(dir + '/train_log.tsv')});
        evaluate();
    }

    function step() {
        if (stopping) {
            finish('stopped');
            return;
        }
        const rc = P.train(run, CHUNK);
        post({type: 'progress', log: text(dir + '/train_log.tsv')});
        if (rc < 0) {
            fail('train');
            finish('failed');
        } else if (rc === 1) {
            finish('done');
        } else {
            setTimeout(step, 0); // read the messages (a stop) before the next chunk
        }
    }

    function handle(m) {
        if (m.cmd === 'stop') {
            stopping = true;
        } else if (m.cmd === 'start') {
            dir = m.dir;
            writeData(m.data);
            // the preset's sizes first: a setting given after them wins
            run = P.create(dir, `model=${m.model} ${P.preset(m.model, m.preset || '')} ` +
                           m.settings);
            if (!run) {
                fail('create');
                return;
            }
            P.config(run);
            post({type: 'created', config: P.text()});
            training = true;
            setTimeout(step, 0);
        } else if (m.cmd === 'curves') {
            post({type: 'curves', compare: liveCurves()});
        } else if (m.cmd === 'merge') {
            merge(m.runs);
        } else if (m.cmd === 'open') {
            dir = m.dir;
            opened = true;
            writeData(m.data);
            M.FS.mkdirTree('/upload');
            M.FS.writeFile('/upload/model.ckpt', m.bytes);
            run = P.open('/upload/model.ckpt', dir, m.settings);
            if (!run) {
                fail('open');
                return;
            }
            P.config(run);
            post({type: 'created', config: P.text()});
            evaluate();
        } else if (m.cmd === 'decode') {
            if (P.decode(run, m.input) !== 0) {
                post({type: 'error', where: 'decode', message: P.error()});
                return;
            }
            let files = {};
            try {
                files = readTree(dir + '/trace', '', {});
            } catch (e) {
                files = {}; // a model without a trace
            }
            const c = compare();
            post({type: 'decoded', text: P.text(), files, compare: c.compare, view: c.view});
        }
    }

    self.onmessage = (e) => (P ? handle(e.data) : queue.push(e.data));

    AttnlabCore().then((mod) => {
        M = mod;
        const f = (name, ret, args) => M.cwrap(name, ret, args);
        P = {
            init: f('page_init', null, []),
            error: f('page_error', 'string', []),
            text: f('page_text', 'string', []),
            models: f('page_models', 'string', []),
            preset: f('page_preset', 'string', ['string', 'string']),
            create: f('page_create', 'number', ['string', 'string']),
            train: f('page_train', 'number', ['number', 'number']),
            finish: f('page_finish', 'number', ['number']),
            evaluate: f('page_evaluate', 'number', ['number']),
            open: f('page_open', 'number', ['string', 'string', 'string']),
            config: f('page_config', 'number', ['number']),
            decode: f('page_decode', 'number', ['number', 'string']),
            compare: f('page_compare', 'number', ['string', 'string']),
            curves: f('page_curves', 'number', ['string', 'string']),
            stage: f('page_stage', 'number', ['number', 'string']),
            figures: f('page_figures', 'string', []),
        };
        P.init();
        post({type: 'ready', models: P.models(), figures: P.figures()});
        for (const m of queue)
            handle(m);
        queue = [];
    }, (err) => post({type: 'error', where: 'load', message: String(err)}));
})();
