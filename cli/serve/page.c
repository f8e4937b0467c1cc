/* page.c - the files of tacho serve's page, embedded in tacho at build time so that the
 * page needs nothing from elsewhere: the page itself (page.html) and uPlot's script and
 * style sheet (third_party/uplot/, fetched and checked by scripts/vendor-uplot.sh). The
 * assembler's .incbin copies each file's bytes into .rodata; the Makefile makes this
 * object depend on the files, which the compiler's -MMD cannot see. Paths are from the
 * source tree's root, where make runs. */
#include <string.h>

#include "serve.h"

/* FILE's bytes between the hidden symbols NAME and NAME_end, with a NUL after them */
#define EMBED(name, file)                                                          \
	__asm__(".pushsection .rodata\n"                                           \
		".global " #name "\n.hidden " #name "\n.type " #name ", @object\n" \
		".global " #name "_end\n.hidden " #name "_end\n"                   \
		".balign 16\n" #name ":\n.incbin \"" file "\"\n" #name "_end:\n"   \
		".byte 0\n.popsection\n");                                        \
	extern const char name[], name##_end[]

EMBED(serve_page_html, "cli/serve/page.html");
EMBED(serve_uplot_js, "third_party/uplot/uPlot.iife.min.js");
EMBED(serve_uplot_css, "third_party/uplot/uPlot.min.css");

/* the page's own links are relative (uplot.min.css), so that it works behind a proxy
 * that serves it under a path */
static const struct serve_file files[] = {
	{ "/", "text/html; charset=utf-8", serve_page_html, serve_page_html_end },
	{ "/index.html", "text/html; charset=utf-8", serve_page_html, serve_page_html_end },
	{ "/uplot.iife.min.js", "text/javascript; charset=utf-8", serve_uplot_js,
	  serve_uplot_js_end },
	{ "/uplot.min.css", "text/css; charset=utf-8", serve_uplot_css, serve_uplot_css_end },
};

const struct serve_file *serve_file_find(const char *url)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(url, files[i].path))
			return &files[i];
	return NULL;
}
