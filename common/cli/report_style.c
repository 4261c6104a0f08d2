/* report_style.c — the style sheet of the report page, on screen and on paper (see
 * report_html.h).
 *
 * Design. One string, put whole into the page's <style>, so the page stays one file. On
 * screen every figure shrinks to the width of the page (a heat map too:
 * image-rendering: pixelated keeps its cells sharp blocks), so nothing scrolls sideways;
 * the tables of weights scroll in their own box. In print (A4, with margins) a figure
 * and its caption are never cut across two pages and no figure is taller than a page;
 * whatever works only on a screen (the tables of weights, folded away behind a click,
 * and every hint about hovering) is in an element of class screen, left out, and an
 * element of class paper, shown only in print, says on paper what they would have.
 * The classes it names are report_page.c's and report_html.c's.
 */
#include "report_html.h"

const char report_style[] =
    "body{font-family:\"Noto Sans\",\"Noto Sans CJK SC\",\"PingFang SC\",\"Microsoft YaHei\","
    "sans-serif;max-width:1700px;margin:2em auto;padding:0 1em;color:#222;line-height:1.5;"
    "font-size:17px}\n"
    "h1{font-size:1.7em}p,figcaption{max-width:62em}\n"
    "figure{margin:2.5em 0 1em}figcaption{color:#333;margin-top:.6em}\n"
    ".fig img{display:block;max-width:100%;height:auto}\n"
    ".fig img.heat{image-rendering:pixelated}\n"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;"
    "text-align:right}th{background:#f4f4f4}.sum th,td.l{text-align:left}\n"
    ".sum,.man{max-width:100%;overflow-x:auto}.man td{overflow-wrap:anywhere;text-align:left}\n"
    "details{margin:.8em 0 2em}.vals{display:flex;flex-wrap:wrap;gap:1.5em;overflow-x:auto}\n"
    "table.att td,table.att th{padding:0 .2em;font-size:12px;min-width:2.4em;height:1.7em;"
    "text-align:center;border:1px solid #fff}table.att td.x{background:#fff}\n"
    "table.att caption{text-align:left;font-size:14px}\n"
    ".paper{display:none}\n"
    "@media print{\n"
    "@page{size:A4;margin:16mm 14mm}\n"
    "body{max-width:none;margin:0;padding:0;font-size:10.5pt;color:#000}\n"
    "h1,h2{break-after:avoid;page-break-after:avoid}\n"
    "figure{margin:1.2em 0;break-inside:avoid;page-break-inside:avoid}\n"
    ".fig img{width:auto;max-height:225mm}\n"
    "tr{break-inside:avoid;page-break-inside:avoid}\n"
    "td,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
    ".sum,.man{overflow:visible}\n"
    /* a number and its spread on one line; the words of a row wrap, but not letter by
     * letter: the verdict column no longer takes the width the numbers need */
    ".sum td{white-space:nowrap;padding:.2em .4em}.sum td.l{white-space:normal;"
    "min-width:6em}\n"
    ".screen{display:none}.paper{display:block;color:#333}\n"
    "}\n";
