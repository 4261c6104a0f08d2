// helper.js — what the page's checks and tools share: the page's API over the core
// module under node, the files of a folder of its file system, the cells of a heat map
// gnuplot-wasm drew, a list of checks that counts failures, and the page opened in
// headless Chromium with its form filled in.
//
// Used by tests/web/page.js (node: the entry point, the figures), tests/web/browser.js
// (the page in Chromium), tests/web/screenshots.js and tests/web/speed.js. Chromium is
// driven by playwright-core (pinned in tests/web/package-lock.json), required only by
// openPage, so that the node checks run where it is not installed.
'use strict';
const path = require('path');

// The page's API over the module M (common/web/web_page.h), as worker.js wraps it.
function pageApi(M) {
    const f = (name, ret, args) => M.cwrap(name, ret, args);
    return {
        init: f('page_init', null, []),
        error: f('page_error', 'string', []),
        text: f('page_text', 'string', []),
        preset: f('page_preset', 'string', ['string', 'string']),
        create: f('page_create', 'number', ['string', 'string']),
        train: f('page_train', 'number', ['number', 'number']),
        finish: f('page_finish', 'number', ['number']),
        evaluate: f('page_evaluate', 'number', ['number']),
        open: f('page_open', 'number', ['string', 'string', 'string']),
        close: f('page_close', 'number', ['number']),
        decode: f('page_decode', 'number', ['number', 'string']),
        compare: f('page_compare', 'number', ['string', 'string']),
        curves: f('page_curves', 'number', ['string', 'string']),
        stage: f('page_stage', 'number', ['number', 'string']),
        figures: f('page_figures', 'string', []),
    };
}

// Every file under dir of the module M's file system, {relative path: bytes}.
function filesOf(M, dir, prefix = '', acc = {}) {
    for (const name of M.FS.readdir(dir)) {
        if (name === '.' || name === '..')
            continue;
        const p = dir + '/' + name;
        if (M.FS.isDir(M.FS.stat(p).mode))
            filesOf(M, p, prefix + name + '/', acc);
        else
            acc[prefix + name] = M.FS.readFile(p);
    }
    return acc;
}

// The cells of a heat map gnuplot-wasm drew: its filled rectangles at least 10 units on
// each side (the thin slices of a colour box left out), the bars of plots/gates.gp (in
// its two fixed colours, #BCBDDC and #3F007D) left out too.
function heatCells(svg) {
    let n = 0;
    const re = /<polygon fill\s*=\s*['"]([^'"]*)['"][^>]*points\s*=\s*['"]([^'"]*)['"]/g;
    for (const m of svg.matchAll(re)) {
        const fill = m[1].replace(/\s+/g, '');
        const p = m[2].trim().split(/\s+/).map((q) => q.split(',').map(Number));
        if (p.length !== 4 || fill === 'rgb(188,189,220)' || fill === 'rgb(63,0,125)')
            continue;
        const xs = p.map((q) => q[0]), ys = p.map((q) => q[1]);
        if (Math.max(...xs) - Math.min(...xs) >= 10 && Math.max(...ys) - Math.min(...ys) >= 10)
            n++;
    }
    return n;
}

// A list of checks: check(ok, what) prints "PREFIX: ok: WHAT" or "PREFIX: FAILED: WHAT";
// failures holds the failed ones.
function checker(prefix) {
    const failures = [];
    const check = (ok, what) => {
        process.stdout.write(`${prefix}: ${ok ? 'ok' : 'FAILED'}: ${what}\n`);
        if (!ok)
            failures.push(what);
        return ok;
    };
    return {check, failures};
}

// Opens the page (html, a file) from file:// in headless Chromium (exe: Debian's
// chromium by default), in English, with downloads allowed; script errors and the
// console's errors go to errors. Resolves to {browser, page, errors}: close the browser.
async function openPage(html, exe, viewport) {
    const {chromium} = require('playwright-core');
    const browser = await chromium.launch({
        executablePath: exe || '/usr/bin/chromium',
        args: ['--no-sandbox'], // root in a container has no user namespaces to sandbox
    });
    const page = await browser.newPage(Object.assign({acceptDownloads: true},
                                                     viewport ? {viewport} : {}));
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto('file://' + path.resolve(html));
    await page.click('button[data-lang=en]');
    return {browser, page, errors};
}

// Fills the page's form: the models to train (names), the training lengths [min, max],
// the sizes preset, and the seed, steps, stop accuracy and validation interval when given.
async function fillForm(page, o) {
    for (const m of ['lstm', 'rnn_attention', 'transformer'])
        await (o.models.includes(m) ? page.check(`input[value=${m}]`)
                                    : page.uncheck(`input[value=${m}]`));
    if (o.task)
        await page.check(`input[name=task][value=${o.task}]`);
    if (o.lengths) {
        await page.fill('#train-min', String(o.lengths[0]));
        await page.fill('#train-max', String(o.lengths[1]));
    }
    if (o.preset)
        await page.selectOption('#preset', o.preset);
    const fields = {seed: '#seed', steps: '#steps', stopAcc: '#stop-acc', logEvery: '#log-every'};
    for (const [k, sel] of Object.entries(fields))
        if (o[k] !== undefined)
            await page.fill(sel, String(o[k]));
}

module.exports = {pageApi, filesOf, heatCells, checker, openPage, fillForm};
