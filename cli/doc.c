/* doc.c - the manual pages and the shell completions, written from the command tables
 * (main.c's cli_main and cli_commands, each command's options), so that neither can
 * drift from what the parser accepts: `tacho --dump-cli WHAT`, which the build runs
 * (docs/packaging.md).
 *
 *   tacho --dump-cli pages          the name of every page, one a line (tacho, tacho-stat, ...)
 *   tacho --dump-cli man PAGE [DATE] the page in man(7) roff, dated DATE (YYYY-MM-DD)
 *   tacho --dump-cli bash           the bash completion (sourced; registers _tacho)
 *   tacho --dump-cli zsh            the zsh completion (#compdef tacho)
 *   tacho --dump-cli options        "COMMAND<TAB>-x<TAB>--long" per option, for the tests
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

/* What an option's argument is, for the completions: from the name its help gives it. */
enum arg_kind { ARG_NONE, ARG_OTHER, ARG_FILE, ARG_DIR, ARG_EVENTS };

static enum arg_kind arg_kind(const struct cli_option *o)
{
	static const char *const files[] = { "<file>", "<out>", "<dump>", "<f>", NULL };

	if (!o->arg)
		return ARG_NONE;
	for (size_t i = 0; files[i]; i++)
		if (!strcmp(o->arg, files[i]))
			return ARG_FILE;
	if (!strcmp(o->arg, "<dir>"))
		return ARG_DIR;
	if (!strcmp(o->arg, "<events>") || !strcmp(o->arg, "<event>"))
		return ARG_EVENTS;
	return ARG_OTHER;
}

/* The word after the parent's name: "report" of "trace report". */
static const char *sub_word(const struct cli_cmd *sub)
{
	const char *sp = strrchr(sub->name, ' ');

	return sp ? sp + 1 : sub->name;
}

/* --- man(7) ------------------------------------------------------------------------ */

/* One line of text for roff: backslashes escaped, a control character at its start
 * made text, hyphens left as they are (text, not options). */
static void roff_text(const char *s, size_t len, FILE *f)
{
	if (len && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else
			fputc(s[i], f);
	}
	fputc('\n', f);
}

/* An option's name as roff: bold, with its dashes as minus signs. */
static void roff_option_name(const char *dashes, const char *name, FILE *f)
{
	fputs("\\fB", f);
	for (const char *d = dashes; *d; d++)
		fputs("\\-", f);
	for (const char *c = name; *c; c++)
		fputs(*c == '-' ? "\\-" : (char[2]){ *c, 0 }, f);
	fputs("\\fR", f);
}

/* Paragraphs of help text (lines up to a blank one): one whose lines all start at the
 * margin is filled; one with an indented line (a table, a list, examples) keeps its
 * lines, indented. */
static void roff_paragraphs(const char *text, bool after_heading, FILE *f)
{
	const char *p = text;
	bool first = after_heading;   /* a heading starts a paragraph of its own */

	while (*p) {
		const char *end = strstr(p, "\n\n");
		size_t plen = end ? (size_t)(end - p) + 1 : strlen(p);
		bool pre = false;

		while (*p == '\n') {   /* blank lines between paragraphs */
			p++;
			if (plen)
				plen--;
		}
		if (!plen)
			continue;
		for (const char *l = p; l < p + plen; l = strchr(l, '\n') + 1) {
			if (*l == ' ' || *l == '\t')
				pre = true;
			if (!strchr(l, '\n'))
				break;
		}
		if (!first)
			fputs(".PP\n", f);
		fputs(pre ? ".RS 2\n.nf\n" : "", f);
		first = false;
		for (const char *l = p; l < p + plen;) {
			size_t len = strcspn(l, "\n");

			if (!pre)
				while (len && *l == ' ')
					l++, len--;
			if (len)
				roff_text(l, len, f);
			else if (pre)
				fputs("\n", f);
			l += len + (l[len] == '\n');
		}
		if (pre)
			fputs(".fi\n.RE\n", f);
		p += plen;
	}
}

/* The usage lines, less their "usage: " and "   or: ", one a line. */
static void roff_synopsis(const struct cli_cmd *cmd, FILE *f)
{
	const char *end = strstr(cmd->usage, "\n\n");
	const char *p = cmd->usage, *stop = end ? end + 1 : p + strlen(p);

	fputs(".nf\n", f);
	while (p < stop) {
		size_t len = strcspn(p, "\n");
		const char *l = p;

		if (!strncmp(l, "usage: ", 7))
			l += 7;
		else if (!strncmp(l, "   or: ", 7))
			l += 7;
		roff_text(l, len - (size_t)(l - p), f);
		p += len + 1;
	}
	fputs(".fi\n", f);
}

/* The description: the usage text after its usage lines. */
static const char *description(const struct cli_cmd *cmd)
{
	const char *end = strstr(cmd->usage, "\n\n");

	return end ? end + 2 : "";
}

static void roff_options(const struct cli_cmd *cmd, FILE *f)
{
	for (const struct cli_option *o = cmd->options; o && o->id; o++) {
		const char *p = o->help;
		char neg[CLI_NEG_NAME_MAX];

		fputs(".TP\n", f);
		if (o->short_name)
			roff_option_name("-", (char[2]){ o->short_name, 0 }, f);
		if (o->short_name && o->long_name)
			fputs(", ", f);
		if (o->long_name)
			roff_option_name("--", o->long_name, f);
		if (o->arg) {
			fputs(" \\fI", f);
			for (const char *c = o->arg; *c; c++)
				if (*c == '\\')
					fputs("\\e", f);
				else
					fputc(*c, f);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		while (*p) {
			size_t len = strcspn(p, "\n");
			const char *l = p;
			size_t n = len;

			while (n && *l == ' ')
				l++, n--;
			if (n)
				roff_text(l, n, f);
			p += len + (p[len] == '\n');
		}
		if (cli_option_negation(cmd, o, neg, sizeof(neg))) {
			fputs(".br\n", f);
			roff_option_name("--", neg, f);
			fputs(" undoes it (the last of the two wins).\n", f);
		}
	}
}

/* s in capitals, its spaces as sep */
static void upper(const char *s, char sep, FILE *f)
{
	for (; *s; s++)
		fputc(*s == ' ' ? sep : (*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s), f);
}

static void man_command(const struct cli_cmd *cmd, const char *page, const char *date,
			FILE *f)
{
	fputs(".TH ", f);
	upper(page, '-', f);
	fprintf(f, " 1 \"%s\" \"tacho %s\" \"tacho manual\"\n", date, tacho_version());
	fputs(".SH NAME\n", f);
	for (const char *c = page; *c; c++)
		fputs(*c == '-' ? "\\-" : (char[2]){ *c, 0 }, f);
	fputs(" \\- ", f);
	roff_text(cmd->summary, strlen(cmd->summary), f);
	fputs(".SH SYNOPSIS\n", f);
	roff_synopsis(cmd, f);
	fputs(".SH DESCRIPTION\n", f);
	roff_paragraphs(description(cmd), true, f);
	if (cmd == &cli_main) {
		fputs(".SH COMMANDS\n", f);
		for (size_t i = 0; cli_commands[i]; i++) {
			fprintf(f, ".TP\n\\fBtacho\\-%s\\fR(1)\n", cli_commands[i]->name);
			roff_text(cli_commands[i]->summary, strlen(cli_commands[i]->summary), f);
		}
	}
	if (cmd->options && cmd->options[0].id) {
		fputs(".SH OPTIONS\n", f);
		roff_options(cmd, f);
	}
	if (cmd->footer) {
		fputs(".SH NOTES\n", f);
		roff_paragraphs(cmd->footer, true, f);
	}
	for (size_t i = 0; cmd->subcommands && cmd->subcommands[i]; i++) {
		const struct cli_cmd *sub = cmd->subcommands[i];

		fputs(".SH \"", f);
		upper("tacho ", ' ', f);
		upper(sub->name, ' ', f);
		fputs("\"\n", f);
		fputs(".SS Synopsis\n", f);
		roff_synopsis(sub, f);
		fputs(".SS Description\n", f);
		roff_text(sub->summary, strlen(sub->summary), f);
		roff_paragraphs(description(sub), false, f);
		if (sub->options && sub->options[0].id) {
			fputs(".SS Options\n", f);
			roff_options(sub, f);
		}
	}
	fputs(".SH EXIT STATUS\n"
	      "0 on success; 1 when the command could not do its job (a one\\-line message\n"
	      "says why); 2 for an unknown command or option or a bad argument. A command\n"
	      "that runs a program exits with the program's status when it ran.\n", f);
	fputs(".SH SEE ALSO\n", f);
	if (cmd == &cli_main) {
		for (size_t i = 0; cli_commands[i]; i++)
			fprintf(f, "\\fBtacho\\-%s\\fR(1)%s\n", cli_commands[i]->name,
				cli_commands[i + 1] ? "," : "");
	} else {
		fputs("\\fBtacho\\fR(1)\n", f);
	}
	fputs(".PP\nThe documentation in the source tree's docs/ folder "
	      "(docs/tacho.md and a page per command).\n", f);
}

/* --- the completions --------------------------------------------------------------- */

static void each_command(void (*fn)(const struct cli_cmd *cmd, const char *key, FILE *f),
			 FILE *f)
{
	for (size_t i = 0; cli_commands[i]; i++) {
		const struct cli_cmd *cmd = cli_commands[i];

		fn(cmd, cmd->name, f);
		for (size_t k = 0; cmd->subcommands && cmd->subcommands[k]; k++) {
			char key[64];

			snprintf(key, sizeof(key), "%s/%s", cmd->name, sub_word(cmd->subcommands[k]));
			fn(cmd->subcommands[k], key, f);
		}
	}
}

/* The words of the options of cmd whose argument is of kind (ARG_NONE: every option's). */
static void option_words(const struct cli_cmd *cmd, int kind, FILE *f)
{
	bool first = true;

	for (const struct cli_option *o = cmd->options; o && o->id; o++) {
		char neg[CLI_NEG_NAME_MAX];

		if (kind != ARG_NONE && (int)arg_kind(o) != kind)
			continue;
		if (o->short_name) {
			fprintf(f, "%s-%c", first ? "" : " ", o->short_name);
			first = false;
		}
		if (o->long_name) {
			fprintf(f, "%s--%s", first ? "" : " ", o->long_name);
			first = false;
		}
		if (kind == ARG_NONE && cli_option_negation(cmd, o, neg, sizeof(neg))) {
			fprintf(f, "%s--%s", first ? "" : " ", neg);
			first = false;
		}
	}
}

static void bash_case(const struct cli_cmd *cmd, const char *key, FILE *f)
{
	fprintf(f, "\t%s)\n\t\topts='", key);
	option_words(cmd, ARG_NONE, f);
	fputs("'\n\t\tfiles='", f);
	option_words(cmd, ARG_FILE, f);
	fputs("'\n\t\tdirs='", f);
	option_words(cmd, ARG_DIR, f);
	fputs("'\n\t\tevents='", f);
	option_words(cmd, ARG_EVENTS, f);
	fputs("'\n\t\tvalues='", f);
	option_words(cmd, ARG_OTHER, f);
	fprintf(f, "'\n\t\tsubs='");
	for (size_t k = 0; cmd->subcommands && cmd->subcommands[k]; k++)
		fprintf(f, "%s%s", k ? " " : "", sub_word(cmd->subcommands[k]));
	fprintf(f, "'\n\t\toperand=%d\n\t\t;;\n", cmd->stop_at_operand ? 1 : 0);
}

static void bash(FILE *f)
{
	fputs("# bash completion for tacho: written by `tacho --dump-cli bash` from tacho's own\n"
	      "# option tables (cli/doc.c); do not edit.\n"
	      "\n"
	      "_tacho_events()\n"
	      "{\n"
	      "\t\"${1:-tacho}\" list --no-probe 2>/dev/null | awk '/^    [^ ]/ { print $1 }'\n"
	      "}\n"
	      "\n"
	      "_tacho()\n"
	      "{\n"
	      "\tlocal cur prev i cmd= key start opts files dirs events values subs operand\n"
	      "\tcur=${COMP_WORDS[COMP_CWORD]}\n"
	      "\tprev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tCOMPREPLY=()\n"
	      "\t# the command: the first word after the global options\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t-*) ;;\n"
	      "\t\t*) cmd=${COMP_WORDS[i]}; break ;;\n"
	      "\t\tesac\n"
	      "\tdone\n"
	      "\tif [[ -z $cmd ]]; then\n"
	      "\t\tif [[ $cur == -* ]]; then\n"
	      "\t\t\tCOMPREPLY=($(compgen -W '", f);
	option_words(&cli_main, ARG_NONE, f);
	fputs("' -- \"$cur\"))\n"
	      "\t\telse\n"
	      "\t\t\tCOMPREPLY=($(compgen -W 'help", f);
	for (size_t i = 0; cli_commands[i]; i++)
		fprintf(f, " %s", cli_commands[i]->name);
	fputs("' -- \"$cur\"))\n"
	      "\t\tfi\n"
	      "\t\treturn 0\n"
	      "\tfi\n"
	      "\tif [[ $cmd == help ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W '", f);
	for (size_t i = 0; cli_commands[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", cli_commands[i]->name);
	fputs("' -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\tfi\n"
	      "\tkey=$cmd\n"
	      "\tstart=$((i + 1))\n"
	      "\tcase $cmd in\n", f);
	each_command(bash_case, f);
	fputs("\t*) return 0 ;;\n"
	      "\tesac\n"
	      "\t# a subcommand (\"tacho trace report\") right after its command\n"
	      "\tif [[ -n $subs && $COMP_CWORD -gt $start ]] &&\n"
	      "\t   [[ \" $subs \" == *\" ${COMP_WORDS[start]} \"* ]]; then\n"
	      "\t\tkey=$cmd/${COMP_WORDS[start]}\n"
	      "\t\tstart=$((start + 1))\n"
	      "\t\tcase $key in\n", f);
	for (size_t i = 0; cli_commands[i]; i++)
		for (size_t k = 0; cli_commands[i]->subcommands &&
				   cli_commands[i]->subcommands[k]; k++) {
			fprintf(f, "\t\t%s/%s)\n\t\t\topts='", cli_commands[i]->name,
				sub_word(cli_commands[i]->subcommands[k]));
			option_words(cli_commands[i]->subcommands[k], ARG_NONE, f);
			fputs("'\n\t\t\tfiles='", f);
			option_words(cli_commands[i]->subcommands[k], ARG_FILE, f);
			fputs("'\n\t\t\tdirs='", f);
			option_words(cli_commands[i]->subcommands[k], ARG_DIR, f);
			fputs("'\n\t\t\tevents='", f);
			option_words(cli_commands[i]->subcommands[k], ARG_EVENTS, f);
			fputs("'\n\t\t\tvalues='", f);
			option_words(cli_commands[i]->subcommands[k], ARG_OTHER, f);
			fprintf(f, "'\n\t\t\tsubs= operand=%d\n\t\t\t;;\n",
				cli_commands[i]->subcommands[k]->stop_at_operand ? 1 : 0);
		}
	fputs("\t\tesac\n"
	      "\tfi\n"
	      "\t# after \"--\" or the program's name: the program's own words\n"
	      "\tfor ((i = start; i < COMP_CWORD; i++)); do\n"
	      "\t\tlocal w=${COMP_WORDS[i]} p=${COMP_WORDS[i-1]}\n"
	      "\t\tif [[ $w == -- ]] || { [[ $operand == 1 && $w != -* ]] &&\n"
	      "\t\t   [[ \" $files $dirs $events $values \" != *\" $p \"* ]]; }; then\n"
	      "\t\t\tif [[ $w == -- ]]; then i=$((i + 1)); fi\n"
	      "\t\t\tif [[ $i -eq $COMP_CWORD ]]; then\n"
	      "\t\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
	      "\t\t\telif declare -F _command_offset >/dev/null; then\n"
	      "\t\t\t\t_command_offset \"$i\"\n"
	      "\t\t\telse\n"
	      "\t\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\t\t\tfi\n"
	      "\t\t\treturn 0\n"
	      "\t\tfi\n"
	      "\tdone\n"
	      "\tif [[ -n $prev && \" $events \" == *\" $prev \"* ]]; then\n"
	      "\t\tlocal last=${cur##*,}\n"
	      "\t\tCOMPREPLY=($(compgen -P \"${cur%\"$last\"}\" -W \"$(_tacho_events \"${COMP_WORDS[0]}\")\" -- \"$last\"))\n"
	      "\t\treturn 0\n"
	      "\telif [[ -n $prev && \" $files \" == *\" $prev \"* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\telif [[ -n $prev && \" $dirs \" == *\" $prev \"* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -d -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\telif [[ -n $prev && \" $values \" == *\" $prev \"* ]]; then\n"
	      "\t\treturn 0\n"
	      "\tfi\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telif [[ -n $subs && $COMP_CWORD -eq $start ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
	      "\telif [[ $operand == 1 ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
	      "\telse\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\tfi\n"
	      "\treturn 0\n"
	      "}\n"
	      "complete -o filenames -o bashdefault -F _tacho tacho\n", f);
}

/* An option's first line of help, for zsh's brackets: no brackets, quotes or colons. */
static void zsh_desc(const char *help, FILE *f)
{
	size_t len = strcspn(help, "\n");

	for (size_t i = 0; i < len; i++) {
		char c = help[i];

		fputc(c == '[' ? '(' : c == ']' ? ')' : c == '\'' ? '`' : c == ':' ? ';' :
		      c == '\\' ? '/' : c, f);
	}
}

static void zsh_function(const struct cli_cmd *cmd, const char *key, FILE *f)
{
	fputs("_tacho_", f);
	for (const char *c = key; *c; c++)
		fputc(*c == '/' || *c == '-' ? '_' : *c, f);
	fputs("() {\n\t_arguments -s -S \\\n", f);
	for (const struct cli_option *o = cmd->options; o && o->id; o++) {
		const char *action = "";
		char neg[CLI_NEG_NAME_MAX];

		switch (arg_kind(o)) {
		case ARG_FILE: action = "_files"; break;
		case ARG_DIR: action = "_files -/"; break;
		case ARG_EVENTS: action = "_tacho_events"; break;
		default: break;
		}
		fputs("\t\t", f);
		if (o->short_name && o->long_name)
			fprintf(f, "'(-%c --%s)'{-%c%s,--%s%s}'[", o->short_name, o->long_name,
				o->short_name, o->arg ? "+" : "", o->long_name, o->arg ? "=" : "");
		else if (o->short_name)
			fprintf(f, "'-%c%s[", o->short_name, o->arg ? "+" : "");
		else
			fprintf(f, "'--%s%s[", o->long_name, o->arg ? "=" : "");
		zsh_desc(o->help, f);
		fputc(']', f);
		if (o->arg) {
			fputc(':', f);
			for (const char *c = o->arg; *c; c++)
				if (*c != '<' && *c != '>' && *c != ':' && *c != '\'')
					fputc(*c, f);
			fprintf(f, ":%s", action);
		}
		fputs("' \\\n", f);
		if (cli_option_negation(cmd, o, neg, sizeof(neg)))
			fprintf(f, "\t\t'--%s[undo --%s]' \\\n", neg, o->long_name);
	}
	if (cmd->subcommands) {
		fputs("\t\t'1: :((", f);
		for (size_t k = 0; cmd->subcommands[k]; k++) {
			fprintf(f, "%s%s\\:", k ? " " : "", sub_word(cmd->subcommands[k]));
			zsh_desc(cmd->subcommands[k]->summary, f);
		}
		fputs("))' \\\n", f);
	}
	fputs(cmd->stop_at_operand ? "\t\t'*:: :_normal'\n" : "\t\t'*:file:_files'\n", f);
	fputs("}\n\n", f);
}

static void zsh(FILE *f)
{
	fputs("#compdef tacho\n"
	      "# zsh completion for tacho: written by `tacho --dump-cli zsh` from tacho's own\n"
	      "# option tables (cli/doc.c); do not edit.\n"
	      "\n"
	      "_tacho_events() {\n"
	      "\tlocal -a evs\n"
	      "\tevs=(${(f)\"$(tacho list --no-probe 2>/dev/null | awk '/^    [^ ]/ { print $1 }')\"})\n"
	      "\t_values -s , event $evs\n"
	      "}\n"
	      "\n", f);
	each_command(zsh_function, f);
	fputs("_tacho() {\n"
	      "\tlocal curcontext=$curcontext state line\n"
	      "\tlocal -a commands\n"
	      "\tcommands=(\n"
	      "\t\t'help:the help of tacho or of one command'\n", f);
	for (size_t i = 0; cli_commands[i]; i++) {
		fprintf(f, "\t\t'%s:", cli_commands[i]->name);
		zsh_desc(cli_commands[i]->summary, f);
		fputs("'\n", f);
	}
	fputs("\t)\n\t_arguments -C \\\n", f);
	for (const struct cli_option *o = cli_main.options; o && o->id; o++) {
		char neg[CLI_NEG_NAME_MAX];

		if (o->short_name && o->long_name)
			fprintf(f, "\t\t'(-%c --%s)'{-%c,--%s}'[", o->short_name, o->long_name,
				o->short_name, o->long_name);
		else
			fprintf(f, "\t\t'--%s[", o->long_name);
		zsh_desc(o->help, f);
		fputs("]' \\\n", f);
		if (cli_option_negation(&cli_main, o, neg, sizeof(neg)))
			fprintf(f, "\t\t'--%s[undo --%s]' \\\n", neg, o->long_name);
	}
	fputs("\t\t'1: :->command' \\\n"
	      "\t\t'*:: :->args'\n"
	      "\tcase $state in\n"
	      "\tcommand) _describe -t commands 'tacho command' commands ;;\n"
	      "\targs)\n"
	      "\t\tcurcontext=${curcontext%:*:*}:tacho-$words[1]:\n"
	      "\t\tcase $words[1] in\n"
	      "\t\thelp) _describe -t commands 'tacho command' commands ;;\n", f);
	for (size_t i = 0; cli_commands[i]; i++) {
		const struct cli_cmd *cmd = cli_commands[i];
		char fn[64];

		snprintf(fn, sizeof(fn), "_tacho_%s", cmd->name);
		for (char *c = fn; *c; c++)
			if (*c == '-')
				*c = '_';
		fprintf(f, "\t\t%s)", cmd->name);
		if (cmd->subcommands) {
			fputs(" case $words[2] in", f);
			for (size_t k = 0; cmd->subcommands[k]; k++)
				fprintf(f, " %s) shift words; (( CURRENT-- )); %s_%s ;;",
					sub_word(cmd->subcommands[k]), fn, sub_word(cmd->subcommands[k]));
			fprintf(f, " *) %s ;; esac ;;\n", fn);
		} else {
			fprintf(f, " %s ;;\n", fn);
		}
	}
	fputs("\t\tesac ;;\n"
	      "\tesac\n"
	      "}\n"
	      "\n"
	      "_tacho \"$@\"\n", f);
}

/* --- the list for the tests --------------------------------------------------------- */

static void options_list(const struct cli_cmd *cmd, const char *key, FILE *f)
{
	for (const struct cli_option *o = cmd->options; o && o->id; o++) {
		char neg[CLI_NEG_NAME_MAX];

		fprintf(f, "%s\t", key);
		if (o->short_name)
			fprintf(f, "-%c", o->short_name);
		fputc('\t', f);
		if (o->long_name)
			fprintf(f, "--%s", o->long_name);
		fputc('\n', f);
		if (cli_option_negation(cmd, o, neg, sizeof(neg)))
			fprintf(f, "%s\t\t--%s\n", key, neg);
	}
}

/* The command a page describes: "tacho" or "tacho-NAME". */
static const struct cli_cmd *page_command(const char *page)
{
	if (!strcmp(page, "tacho"))
		return &cli_main;
	if (strncmp(page, "tacho-", 6))
		return NULL;
	for (size_t i = 0; cli_commands[i]; i++)
		if (!strcmp(cli_commands[i]->name, page + 6))
			return cli_commands[i];
	return NULL;
}

int cli_doc(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "pages") && argc == 2) {
		puts("tacho");
		for (size_t i = 0; cli_commands[i]; i++)
			printf("tacho-%s\n", cli_commands[i]->name);
	} else if (!strcmp(what, "man") && (argc == 3 || argc == 4)) {
		const struct cli_cmd *cmd = page_command(argv[2]);

		if (!cmd) {
			fprintf(stderr, "tacho: no manual page '%s' (see --dump-cli pages)\n", argv[2]);
			return EXIT_USAGE;
		}
		/* the date: the build's (SOURCE_DATE_EPOCH or the last commit's), for a
		 * page that is the same at every build of the same source */
		man_command(cmd, argv[2], argc == 4 ? argv[3] : "", stdout);
	} else if (!strcmp(what, "bash") && argc == 2) {
		bash(stdout);
	} else if (!strcmp(what, "zsh") && argc == 2) {
		zsh(stdout);
	} else if (!strcmp(what, "options") && argc == 2) {
		options_list(&cli_main, "tacho", stdout);
		each_command(options_list, stdout);
	} else {
		fputs("usage: tacho --dump-cli pages | man <page> [<date>] | bash | zsh | options\n", stderr);
		return EXIT_USAGE;
	}
	return cli_close_output(stdout, NULL);
}
