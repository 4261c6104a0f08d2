// browser.js — the page in a real browser (make check-web): headless Chromium opens
// build/web/attnlab.html from file://, trains a small Transformer on the copy task to its
// target accuracy and a small LSTM for a few steps, each in its Worker, and decodes an
// input with both. The page must say the run reached its target, show every panel's
// figure as an inline SVG drawn by plots/*.gp in gnuplot-wasm (training curves, accuracy
// by length, accuracy by position, the attention maps of the decoded input with one cell
// per query and key of each head, the LSTM's gates), keep the numbers behind "numbers",
// show the captions in Chinese after the switch, and download a model.ckpt that `attnlab
// eval` reads.
//
// usage: node tests/web/browser.js PAGE_HTML [CHROMIUM [ATTNLAB]]
//   CHROMIUM: the browser to drive (default /usr/bin/chromium); playwright-core (pinned
//   in tests/web/package-lock.json, `npm ci` in tests/web) only drives it: nothing is
//   downloaded. ATTNLAB: the native program that must read the downloaded checkpoint
//   (default build/attnlab). Exit status: 0 when every check holds, 1 otherwise, 2 for
//   bad usage.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {execFileSync} = require('child_process');
const {chromium} = require('playwright-core');

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

async function main() {
    const [html, exe, attnlab] = process.argv.slice(2);
    if (!html) {
        process.stderr.write('usage: node tests/web/browser.js PAGE_HTML [CHROMIUM [ATTNLAB]]\n');
        process.exit(2);
    }
    const browser = await chromium.launch({
        executablePath: exe || '/usr/bin/chromium',
        args: ['--no-sandbox'], // root in a container has no user namespaces to sandbox
    });
    const failures = [];
    const check = (ok, what) => {
        process.stdout.write(`browser: ${ok ? 'ok' : 'FAILED'}: ${what}\n`);
        if (!ok)
            failures.push(what);
    };
    try {
        const page = await browser.newPage({acceptDownloads: true});
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        await page.goto('file://' + path.resolve(html));
        await page.click('button[data-lang=en]');
        // a small transformer on copy 3..6 to 0.99, validating every 25 steps
        await page.uncheck('input[value=lstm]');
        await page.uncheck('input[value=rnn_attention]');
        await page.fill('#train-min', '3');
        await page.fill('#train-max', '6');
        await page.selectOption('#preset', 'small');
        await page.fill('#log-every', '25');
        await page.fill('#stop-acc', '0.99');
        await page.fill('#steps', '3000');
        await page.click('#train');
        // and a small LSTM for 50 steps (its gates)
        await page.check('input[value=lstm]');
        await page.uncheck('input[value=transformer]');
        await page.fill('#steps', '50');
        await page.click('#train');
        const tf = page.locator('article.run').nth(0), lstm = page.locator('article.run').nth(1);
        // the page stays responsive while the Workers train: the language switch works
        await page.click('button[data-lang=zh]');
        check(await page.locator('#runs-h').textContent() === '运行', 'the page answers while training');
        await page.click('button[data-lang=en]');
        const long = {timeout: 10 * 60 * 1000};
        for (const card of [tf, lstm])
            for (const f of ['curves', 'accuracy', 'positions'])
                await card.locator(`[data-figure=${f}] svg`).waitFor(long);
        const status = await tf.locator('.status').textContent();
        check(/reached the target accuracy/.test(status), `the run reached its target (${status})`);
        for (const [card, name] of [[tf, 'transformer'], [lstm, 'lstm']])
            for (const f of ['curves', 'accuracy', 'positions']) {
                const fig = card.locator(`[data-figure=${f}]`);
                const svg = await fig.locator('svg').evaluate((e) => e.outerHTML);
                const what = await fig.locator('.what').textContent();
                const ms = await fig.getAttribute('data-ms');
                check(/<path|<polyline|<polygon/.test(svg) && what.length > 40,
                      `${name}: the ${f} panel shows its SVG (${svg.length} bytes, ${ms} ms) and caption`);
            }
        const acc = await tf.locator('[data-figure=accuracy] svg').evaluate((e) => e.outerHTML);
        check(/chance = 1\/\d+/.test(acc) && /trained on L = 3–6/.test(acc),
              'the accuracy figure marks chance and the training range');
        const rows = await tf.locator('[data-figure=accuracy]').locator('..')
            .locator('details table tbody tr.in-range').count();
        check(rows > 0, `the numbers by length are kept behind "numbers", the training range marked (${rows} rows)`);
        // decode an input: its maps, one cell per query and key of every head
        await tf.locator('.decode input').fill('2 7 1 8');
        await tf.locator('.decode button').click();
        await tf.locator('[data-figure=attention_cross] svg').waitFor({timeout: 120 * 1000});
        const decoded = await tf.locator('.decoded').textContent();
        check(/decoded: 2 7 1 8/.test(decoded), `decoding 2 7 1 8 gives it back (${decoded.replace(/\n/g, '; ')})`);
        const heads = await tf.locator('.decode-out select option').evaluateAll(
            (os) => os.filter((o) => /^enc_self\./.test(o.value)).length);
        for (const [f, per] of [['attention_enc_self', 16], ['attention_cross', 16],
                                ['attention_dec_self', 10]]) {
            const svg = await tf.locator(`[data-figure=${f}] svg`).evaluate((e) => e.outerHTML);
            check(heads > 0 && heatCells(svg) === per * heads,
                  `${f}: ${heatCells(svg)} cells for ${heads} head(s) of a 4-token example (${per} each)`);
        }
        await lstm.locator('.decode input').fill('2 7 1 8');
        await lstm.locator('.decode button').click();
        await lstm.locator('[data-figure=gates] svg').waitFor({timeout: 120 * 1000});
        const gates = await lstm.locator('[data-figure=gates] svg').evaluate((e) => e.outerHTML);
        check(heatCells(gates) > 0, `the LSTM's gates are drawn (${heatCells(gates)} cells)`);
        // the captions in Chinese
        const en = await tf.locator('[data-figure=accuracy] .what').textContent();
        await page.click('button[data-lang=zh]');
        const zh = await tf.locator('[data-figure=accuracy] .what').textContent();
        const zhMap = await tf.locator('[data-figure=attention_cross] .what').textContent();
        check(zh !== en && /逐词准确率/.test(zh) && /注意力/.test(zhMap),
              `the captions are in Chinese after the switch (${zh.slice(0, 20)}…)`);
        await page.click('button[data-lang=en]');
        // the checkpoint the command line reads
        const [dl] = await Promise.all([page.waitForEvent('download'),
            tf.locator('button', {hasText: 'Download model.ckpt'}).click()]);
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-browser-'));
        const ckpt = path.join(tmp, 'model.ckpt');
        await dl.saveAs(ckpt);
        let evalOk = false, evalOut = '';
        try {
            evalOut = execFileSync(attnlab || 'build/attnlab',
                ['eval', '--checkpoint', ckpt, '--lengths', '4', '--samples', '8'],
                {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
            evalOk = true;
        } catch (e) {
            evalOut = String(e.stderr || e.message);
        }
        fs.rmSync(tmp, {recursive: true, force: true});
        check(evalOk, `attnlab eval reads the downloaded model.ckpt (${evalOut.trim().split('\n').pop()})`);
        check(errors.length === 0, `no script error (${errors.join(' | ')})`);
    } finally {
        await browser.close();
    }
    process.stdout.write(`browser: ${failures.length ? failures.length + ' failed' : 'every check passed'}\n`);
    process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
    process.stderr.write('browser.js: ' + (e && e.stack || e) + '\n');
    process.exit(1);
});
