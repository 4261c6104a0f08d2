// browser.js — the page in a real browser (make check-web): headless Chromium opens
// build/web/attnlab.html from file://, trains a small Transformer on the copy task to its
// target accuracy and a small LSTM until it is stopped, each in its Worker, and decodes
// an input with both. The page must draw the LSTM's training curves while it trains
// (twice at least, before it is stopped), say the Transformer reached its target, show
// every panel's figure as an inline SVG drawn by plots/*.gp in gnuplot-wasm (training
// curves, accuracy by length, accuracy by position, the attention maps of the decoded
// input with one cell per query and key of each head, the LSTM's gates), keep the
// numbers behind "numbers", show both runs together (the summary with how their runs
// ended, the accuracy of both models, the budget figure the accuracy caption names),
// show the captions in Chinese after the switch, download a model.ckpt that `attnlab
// eval` reads, and open that checkpoint again: its accuracy drawn, its maps drawn for a
// decoded input.
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
const {heatCells, checker, openPage, fillForm} = require('./helper.js');

const outer = (loc) => loc.evaluate((e) => e.outerHTML);

async function main() {
    const [html, exe, attnlab] = process.argv.slice(2);
    if (!html) {
        process.stderr.write('usage: node tests/web/browser.js PAGE_HTML [CHROMIUM [ATTNLAB]]\n');
        process.exit(2);
    }
    const {browser, page, errors} = await openPage(html, exe);
    const {check, failures} = checker('browser');
    const long = {timeout: 10 * 60 * 1000};
    try {
        // a small transformer on copy 3..6 to 0.99, validating every 25 steps
        await fillForm(page, {models: ['transformer'], lengths: [3, 6], preset: 'small',
                              logEvery: 25, stopAcc: 0.99, steps: 3000});
        await page.click('#train');
        // and a small LSTM with no end in sight (target 1, a long cap): stopped below
        await fillForm(page, {models: ['lstm'], steps: 100000, stopAcc: 1});
        await page.click('#train');
        const tf = page.locator('article.run').nth(0), lstm = page.locator('article.run').nth(1);
        // the page stays responsive while the Workers train: the language switch works
        await page.click('button[data-lang=zh]');
        check(await page.locator('#runs-h').textContent() === '运行', 'the page answers while training');
        await page.click('button[data-lang=en]');
        // the LSTM's curves drawn while it trains, and drawn again at a later step
        await page.waitForFunction(() => Number(document.querySelectorAll('article.run')[1]
            .dataset.liveDraws || 0) >= 2, null, long);
        const liveCaption = await lstm.locator('.panel figcaption').first().textContent();
        const liveFig = await lstm.locator('[data-figure=curves]').getAttribute('data-live');
        check(liveFig === '1' && /drawn while it trains, up to step \d+/.test(liveCaption) &&
              (await lstm.locator('.muted').first().textContent()) === 'training',
              `the curves are drawn while the LSTM trains (${liveCaption})`);
        await lstm.locator('button', {hasText: 'Stop'}).click();
        for (const card of [tf, lstm])
            for (const f of ['accuracy', 'positions'])
                await card.locator(`[data-figure=${f}] svg`).waitFor(long);
        await page.waitForFunction(() => [...document.querySelectorAll('article.run')]
            .every((a) => a.querySelector('[data-figure=curves][data-live="0"] svg')), null, long);
        const status = await tf.locator('.status').textContent();
        check(/reached the target accuracy/.test(status), `the run reached its target (${status})`);
        check(/stopped by you after step/.test(await lstm.locator('.status').textContent()),
              'the LSTM says it was stopped');
        for (const [card, name] of [[tf, 'transformer'], [lstm, 'lstm']])
            for (const f of ['curves', 'accuracy', 'positions']) {
                const fig = card.locator(`[data-figure=${f}]`);
                const svg = await outer(fig.locator('svg'));
                const what = await fig.locator('.what').textContent();
                const ms = await fig.getAttribute('data-ms');
                check(/<path|<polyline|<polygon/.test(svg) && what.length > 40,
                      `${name}: the ${f} panel shows its SVG (${svg.length} bytes, ${ms} ms) and caption`);
            }
        const acc = await outer(tf.locator('[data-figure=accuracy] svg'));
        check(/chance = 1\/\d+/.test(acc) && /trained on L = 3–6/.test(acc),
              'the accuracy figure marks chance and the training range');
        const rows = await tf.locator('[data-figure=accuracy]').locator('..')
            .locator('details table tbody tr.in-range').count();
        check(rows > 0, `the numbers by length are kept behind "numbers", the training range marked (${rows} rows)`);
        // both runs together: the summary, the accuracy of both, the budget figure
        await page.locator('#all [data-figure=budget] svg').waitFor(long);
        await page.locator('#all [data-figure=accuracy] svg').waitFor(long);
        const allAcc = await outer(page.locator('#all [data-figure=accuracy] svg'));
        const verdicts = await page.locator('#all-summary td.verdict').allTextContents();
        const caption = await page.locator('#all [data-figure=accuracy] .what').textContent();
        check(/transformer/.test(allAcc) && /lstm/.test(allAcc) && verdicts.length === 2,
              `all runs: one accuracy figure of both models, a summary with how each ended (${verdicts.join('; ')})`);
        check(/the summary/.test(caption) && /budget figure/.test(caption) &&
              await page.locator('#all-summary h3').textContent() === 'Summary',
              'the accuracy caption names the summary and the budget figure, and the page shows both');
        // decode an input: its maps, one cell per query and key of every head
        await tf.locator('.decode input').fill('2 7 1 8');
        await tf.locator('.decode button').click();
        await tf.locator('[data-figure=attention_cross] svg').waitFor({timeout: 120 * 1000});
        const decoded = await tf.locator('.decoded').textContent();
        check(/decoded: 2 7 1 8/.test(decoded), `decoding 2 7 1 8 gives it back (${decoded.replace(/\n/g, '; ')})`);
        const heads = await tf.locator('.decode-out select option').evaluateAll(
            (o) => o.filter((x) => /^enc_self\./.test(x.value)).length);
        for (const [f, per] of [['attention_enc_self', 16], ['attention_cross', 16],
                                ['attention_dec_self', 10]]) {
            const svg = await outer(tf.locator(`[data-figure=${f}] svg`));
            check(heads > 0 && heatCells(svg) === per * heads,
                  `${f}: ${heatCells(svg)} cells for ${heads} head(s) of a 4-token example (${per} each)`);
        }
        await lstm.locator('.decode input').fill('2 7 1 8');
        await lstm.locator('.decode button').click();
        await lstm.locator('[data-figure=gates] svg').waitFor({timeout: 120 * 1000});
        const gates = await outer(lstm.locator('[data-figure=gates] svg'));
        check(heatCells(gates) > 0, `the LSTM's gates are drawn (${heatCells(gates)} cells)`);
        // the captions in Chinese
        const en = await tf.locator('[data-figure=accuracy] .what').textContent();
        await page.click('button[data-lang=zh]');
        const zh = await tf.locator('[data-figure=accuracy] .what').textContent();
        const zhMap = await tf.locator('[data-figure=attention_cross] .what').textContent();
        check(zh !== en && /逐词准确率/.test(zh) && /注意力/.test(zhMap) &&
              await page.locator('#all-summary h3').textContent() === '摘要',
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
        check(evalOk, `attnlab eval reads the downloaded model.ckpt (${evalOut.trim().split('\n').pop()})`);
        // that checkpoint opened again: its figures, not only its tables
        await page.click('#open summary');
        await page.setInputFiles('#ckpt-file', ckpt);
        await page.click('#open-ckpt');
        const opened = page.locator('article.run').nth(2);
        await opened.locator('[data-figure=accuracy] svg').waitFor(long);
        await opened.locator('[data-figure=positions] svg').waitFor(long);
        await opened.locator('.decode input').fill('2 7 1 8');
        await opened.locator('.decode button').click();
        await opened.locator('[data-figure=attention_cross] svg').waitFor({timeout: 120 * 1000});
        const openedMap = await outer(opened.locator('[data-figure=attention_cross] svg'));
        check(/trained on L = 3–6/.test(await outer(opened.locator('[data-figure=accuracy] svg'))) &&
              heatCells(openedMap) === 16 * heads,
              `a checkpoint opened shows its accuracy and its maps (${heatCells(openedMap)} cells)`);
        // and merged with the others: its evaluation joins the Transformer's as a second run
        await page.waitForFunction(() => [...document.querySelectorAll('#all-summary tbody th')]
            .some((th) => th.textContent === 'transformer' &&
                  th.parentElement.children[2].textContent === '2'), null, long);
        check(true, 'the checkpoint opened joins the comparison of all runs');
        fs.rmSync(tmp, {recursive: true, force: true});
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
