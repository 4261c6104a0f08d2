/* report_labels.c — the figures' labels in Chinese, written into figure_vars.gp for
 * attnlab report --lang zh (see report.h).
 *
 * Design. Each figure script says every label as tr("KEY", "English"), which is the
 * English unless figure_vars.gp defines zh_KEY: so the scripts read the same alone, in
 * the browser page (which writes no zh_ variable) and for an English report, and the
 * Chinese exists once, here. A label the script formats with sprintf keeps the English
 * one's conversions, in the same order (gnuplot's sprintf has no positional arguments,
 * so a sentence is turned to fit), and enhanced-text markup (a smaller font in
 * braces, i_t, α_t) where the English has it. tests/test_glossary.c holds every line
 * to the glossary, tests/test_captions.c to the scripts (each KEY used, each conversion
 * matched).
 *
 * figure_vars.gp is gnuplot code, so what is written there is limited: each label goes
 * between double quotes with the quote and the backslash escaped and a newline as \n;
 * none holds a backquote (which runs a command), checked by the test. The font's name
 * comes from report_cjk_font, which takes letters, digits, spaces and _.:=,+- only.
 */
#include "report.h"

/* The words follow docs/zh/glossary.md: 符号 (token), 逐词准确率, 整序列准确率, 随机水平
 * (chance), 子图 (panel), 图例 (legend), 色带 (band), 浮点运算次数 (FLOPs). */
const report_label report_labels_zh[] = {
    /* shared by several figures */
    {"chance", "随机水平 = 1/%d"},
    {"params", "%s（%.0fk 个参数）"},
    {"trained_on", "训练长度 L = %d–%d"},
    {"beyond", "更长：从未训练过"},
    {"steps", "训练步数"},
    {"seconds", "秒数"},
    {"encoder", "编码器"},
    {"decoder", "解码器"},
    {"slope1", "斜率 1（∝ L）"},
    {"slope2", "斜率 2（∝ L²）"},
    /* accuracy.gp */
    {"acc_title", "任务 %s：准确率随序列长度的变化（贪心解码；线：%d 个种子的平均值，色带：最小值"
                  "到最大值）"},
    {"acc_x", "序列长度 L（符号数）"},
    {"acc_token_title", "逐词准确率：答对的输出符号所占的比例"},
    {"acc_token_y", "逐词准确率（0–1）"},
    {"acc_seq_title", "整序列准确率：完全答对的序列所占的比例"},
    {"acc_seq_y", "整序列准确率（0–1）"},
    /* positions.gp */
    {"pos_title", "任务 %s：每个输出位置的准确率（贪心解码；线：%d 个种子的平均值，色带：最小值"
                  "到最大值）"},
    {"pos_x", "输出位置（1 = 写出的第一个符号）"},
    {"pos_panel", "L = %d（%s）"},
    {"longer", "比任何训练长度都长"},
    {"shorter", "比任何训练长度都短"},
    {"inside", "在训练长度之内"},
    {"at_position_y", "这个位置的准确率（0–1）"},
    {"pos_never", "位置 > %d：\n从未训练过"},
    /* distance.gp */
    {"dist_title", "任务 %s：每个输出位置的准确率随间隔的变化（训练长度 %d–%d；%d 个种子的平均值；"
                   "颜色：长度）"},
    {"dist_x", "间隔：从读入符号到写出它的步数"},
    {"dist_cb", "序列长度 L"},
    {"dist_y", "这个位置的准确率（0–1）"},
    /* bleu.gp */
    {"bleu_title", "任务 %s：测试集的 BLEU-4 随源句子长度的变化\n（每 5 个长度一组；%d 个种子的"
                   "平均值，色带：最小值到最大值）"},
    {"bleu_x", "源句子长度（词数）"},
    {"bleu_y", "BLEU-4（0–100）"},
    {"bleu_key", "%s（全部长度：%.1f）"},
    {"bleu_key_capped", "%s（全部长度：%.1f；有 %d 次运行被步数上限停下，共 %d 次）"},
    {"bleu_open", "空心点：有运行被步数上限停下，没有达到目标"},
    /* sweep.gp */
    {"sweep_title", "任务 %s：学习率扫描（最多 %d 个种子的中位数，误差线：最小值到最大值）"},
    {"sweep_x", "学习率（对数坐标）"},
    {"sweep_steps_title", "达到 0.99 验证逐词准确率所需的训练步数（空心：没有达到，所需更多）"},
    {"sweep_steps_y", "训练步数（对数坐标）"},
    {"sweep_best_title", "最高验证逐词准确率"},
    {"sweep_best_y", "准确率（0–1）"},
    {"sweep_short", "中位数那次运行没有达到 0.99"},
    /* curves.gp */
    {"curv_title", "任务 %s：训练曲线，长度 %d–%d（教师强制；线：%d 个种子的平均值，色带：最小值"
                   "到最大值）"},
    {"curv_x_step", "训练步数"},
    {"curv_x_time", "训练时间（秒，各种子的平均值）"},
    {"curv_loss_step", "训练损失随训练步数的变化"},
    {"curv_loss_time", "训练损失随时间的变化"},
    {"curv_loss_y", "损失（每个符号的交叉熵，单位奈特；对数坐标）"},
    {"curv_guess", "均匀猜测：ln %d ≈ %.2f"},
    {"curv_acc_step", "逐词准确率随训练步数的变化"},
    {"curv_acc_time", "逐词准确率随时间的变化"},
    {"curv_acc_y", "教师强制准确率（0–1）"},
    {"curv_train", "训练（教师强制）"},
    {"curv_val", "验证（贪心解码，留出的验证集）"},
    /* budget.gp */
    {"bud_title", "任务 %s：验证准确率随训练量的变化，长度 %d–%d（线：%d 个种子的中位数，色带："
                  "最小值到最大值）"},
    {"bud_x_steps", "训练步数（对数坐标）"},
    {"bud_x_secs", "训练秒数（对数坐标，各种子的中位数）"},
    {"bud_seq_title", "长度 %d 上的整序列准确率随%s的变化"},
    {"bud_seq_y", "L = %d 时的整序列准确率（贪心解码）"},
    {"bud_tok_title", "验证逐词准确率随%s的变化"},
    {"bud_tok_y", "逐词准确率，L = %d–%d（贪心解码）"},
    {"bud_capped", "被步数上限停下的运行"},
    {"bud_at", "达到该水平的中位数"},
    {"bud_not", "中位数没有达到"},
    /* capacity.gp */
    {"cap_title", "任务 %s，训练长度 %d–%d：可达长度随模型大小的变化（%d 个种子的中位数，误差线："
                  "最小值到最大值）"},
    {"cap_x", "参数数量（对数坐标）"},
    {"cap_y", "可达长度：到这个长度为止，每个长度的逐词准确率都 ≥ 99%"},
    {"cap_longest", "最长训练长度（%d）"},
    /* attention.gp */
    {"noun_src", "源符号"},
    {"noun_tgt", "输出符号"},
    {"noun_tgt_in", "解码器输入"},
    {"att_x", "被看的%s（键），从左到右"},
    {"att_y", "在看的%s（查询），从上到下"},
    {"att_x_short", "键：%s"},
    {"att_y_short", "查询：%s"},
    {"att_q1", "1/4"}, /* the fraction glyphs are missing from some Chinese fonts */
    {"att_q2", "1/2"},
    {"att_q3", "3/4"},
    {"att_max", "最大"},
    {"att_cb", "权重 ÷ 本子图的最大权重"},
    {"att_rnn_title", "：加性（Bahdanau）注意力 α"},
    {"att_rnn_rows", "行是输出步 t，列是源位置 j；第 t 行 = α_t，即写出输出 t 时的权重"},
    {"att_rnn_colour", "对角线表示输出 t 看向输入 t；颜色：0 … %.2f，即最大权重"},
    {"att_tfm_sub", "行：查询（谁在看），列：键（被看的是什么）；每层每个头一幅子图，各用自己的"
                    "颜色刻度"},
    {"att_runs_of", "运行："},
    {"att_enc_title", " 编码器自注意力：源符号看源符号"},
    {"att_dec_title", " 解码器自注意力：输出步看输出步"},
    {"att_dec_mask", "上三角为空（白色）：因果掩码遮住了之后的步"},
    {"att_cross_title", " 交叉注意力：输出步看源符号"},
    {"att_cross_diag", "对角线表示输出 t 看向输入 t"},
    {"att_panel", "第 %d 层，第 %d 个头（最大 %.2f）"},
    {"att_missing", "缺失"},
    /* gates.gp */
    {"gate_i", "输入门 i_t（1 = 写入新的输入）"},
    {"gate_f", "遗忘门 f_t（1 = 保留记忆）"},
    {"gate_o", "输出门 o_t（1 = 输出记忆）"},
    {"gate_c", "细胞状态 c_t（记忆本身）"},
    {"gate_x_enc", "源序列的步（读入的符号）"},
    {"gate_x_dec", "输出的步（写出的符号）"},
    {"gate_title", "%s：记忆最长的 %d 个单元（共 %d 个）在一个例子上的变化"},
    {"gate_task", "（任务 %s）"},
    {"gate_sub", "单元按平均遗忘门从高到低自上而下排列；横轴是步，标着每一步的符号；门：0 = 关闭"
                 "（白色）… 1 = 打开（深色）"},
    {"gate_unit", "单元 %d"},
    {"gate_cell_cb", "细胞状态的值"},
    {"gate_cb", "门的取值"},
    {"gate_means_title", "全部 %d 个单元的平均遗忘门，从高到低排列（深色：上面画出的 %d 个）"},
    {"gate_means_x", "单元，按平均遗忘门的名次"},
    {"gate_means_y", "平均 f_t"},
    /* cost.gp */
    {"cost_title", "代价随序列长度的变化（双对数坐标）：每个序列一个训练步，前向计算 + 反向传播\n"
                   "{/*0.85 时间：%s；图例中是每个模型拟合出的斜率（1：∝ L，2：∝ L²）}"},
    {"cost_runs", "%d 次运行的中位数，每次运行测一次"},
    {"cost_run", "一次运行，每个长度测一次"},
    {"cost_slope", "：斜率 %.2f"},
    {"cost_x", "序列长度 L（源序列和目标序列各自的符号数）"},
    {"cost_time_title", "实测的每个序列的训练时间"},
    {"cost_time_y", "每个序列的时间（毫秒，对数坐标）"},
    {"cost_flops_title", "每个序列的解析浮点运算次数"},
    {"cost_flops_y", "每个序列的浮点运算次数（对数坐标）"},
    {NULL, NULL},
};

/* Writes s between gnuplot's double quotes: the quote and the backslash escaped, a
 * newline as \n (which gnuplot reads back as one), a backquote (none is written here;
 * it would run a command) as a plain quote. */
static void gp_dquote(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s == '`' ? '\'' : *s, f);
    fputc('"', f);
}

void report_write_labels(FILE *f, const char *font)
{
    fputs("# the figures' words in Chinese: tr(\"KEY\", \"English\") in plots/*.gp reads "
          "zh_KEY\nlabel_font = ", f);
    gp_dquote(f, font);
    fputc('\n', f);
    for (const report_label *l = report_labels_zh; l->key; l++) {
        fprintf(f, "zh_%s = ", l->key);
        gp_dquote(f, l->zh);
        fputc('\n', f);
    }
}
