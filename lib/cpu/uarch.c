/* uarch.c - microarchitecture names keyed by vendor, display family and model (and
 * stepping where one model number covers several designs). Sources: Intel's "Intel
 * Architecture and Processor Identification With CPUID Model and Family Numbers",
 * the SDM Vol. 4 model lists, AMD's revision guides; where one signature covers
 * several designs the entry says so in its note rather than guessing. */
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

struct uarch {
	enum tacho_cpu_vendor vendor;
	unsigned family, model_lo, model_hi;
	unsigned step_lo, step_hi;        /* 0, 0xf: any */
	const char *name;                 /* the part as a whole */
	const char *perf, *eff, *lp;      /* per kind of core on hybrid parts */
	const char *note;
};

/* Any stepping, one name for every kind of core, no note: most entries. */
#define ANY(v, f, lo, hi, n) { v, f, lo, hi, 0, 0xf, n, NULL, NULL, NULL, NULL }
#define INTEL6(lo, hi, n) ANY(TACHO_VENDOR_INTEL, 6, lo, hi, n)
#define HYB(v, f, lo, hi, n, p, e, l) { v, f, lo, hi, 0, 0xf, n, p, e, l, NULL }
#define AMDF(f, lo, hi, n) ANY(TACHO_VENDOR_AMD, f, lo, hi, n)
#define NOTE(v, f, lo, hi, n, nt) { v, f, lo, hi, 0, 0xf, n, NULL, NULL, NULL, nt }
#define STEP(v, f, m, s0, s1, n) { v, f, m, m, s0, s1, n, NULL, NULL, NULL, NULL }

static const struct uarch table[] = {
	ANY(TACHO_VENDOR_INTEL, 4, 0, 0xf, "i486"),
	ANY(TACHO_VENDOR_INTEL, 5, 0, 8, "P5"),
	ANY(TACHO_VENDOR_INTEL, 5, 9, 0xa, "Lakemont (Quark)"),
	INTEL6(0x01, 0x01, "P6 (Pentium Pro)"),
	INTEL6(0x03, 0x06, "P6 (Pentium II)"),
	INTEL6(0x07, 0x08, "P6 (Pentium III)"),
	INTEL6(0x0a, 0x0b, "P6 (Pentium III)"),
	INTEL6(0x09, 0x09, "Pentium M (Banias)"),
	INTEL6(0x0d, 0x0d, "Pentium M (Dothan)"),
	INTEL6(0x15, 0x15, "Pentium M (Tolapai)"),
	INTEL6(0x0e, 0x0e, "Yonah"),
	INTEL6(0x0f, 0x0f, "Core (Merom)"),
	INTEL6(0x16, 0x16, "Core (Merom)"),
	INTEL6(0x17, 0x17, "Penryn"),
	INTEL6(0x1d, 0x1d, "Penryn (Dunnington)"),
	INTEL6(0x1a, 0x1a, "Nehalem"), INTEL6(0x1e, 0x1f, "Nehalem"), INTEL6(0x2e, 0x2e, "Nehalem"),
	INTEL6(0x25, 0x25, "Westmere"), INTEL6(0x2c, 0x2c, "Westmere"), INTEL6(0x2f, 0x2f, "Westmere"),
	INTEL6(0x2a, 0x2a, "Sandy Bridge"), INTEL6(0x2d, 0x2d, "Sandy Bridge"),
	INTEL6(0x3a, 0x3a, "Ivy Bridge"), INTEL6(0x3e, 0x3e, "Ivy Bridge"),
	INTEL6(0x3c, 0x3c, "Haswell"), INTEL6(0x3f, 0x3f, "Haswell"), INTEL6(0x45, 0x46, "Haswell"),
	INTEL6(0x3d, 0x3d, "Broadwell"), INTEL6(0x47, 0x47, "Broadwell"),
	INTEL6(0x4f, 0x4f, "Broadwell"), INTEL6(0x56, 0x56, "Broadwell"),
	INTEL6(0x4e, 0x4e, "Skylake"), INTEL6(0x5e, 0x5e, "Skylake"),
	STEP(TACHO_VENDOR_INTEL, 6, 0x55, 0, 4, "Skylake (Skylake-SP)"),
	STEP(TACHO_VENDOR_INTEL, 6, 0x55, 5, 7, "Skylake (Cascade Lake)"),
	STEP(TACHO_VENDOR_INTEL, 6, 0x55, 8, 0xf, "Skylake (Cooper Lake)"),
	NOTE(TACHO_VENDOR_INTEL, 6, 0x8e, 0x8e, "Skylake",
	     "model 0x8e is a Skylake derivative: Kaby Lake, Amber Lake, Whiskey Lake, Coffee "
	     "Lake or Comet Lake (the stepping and the brand string tell them apart)"),
	NOTE(TACHO_VENDOR_INTEL, 6, 0x9e, 0x9e, "Skylake",
	     "model 0x9e is a Skylake derivative: Kaby Lake or Coffee Lake"),
	NOTE(TACHO_VENDOR_INTEL, 6, 0xa5, 0xa6, "Skylake", "Comet Lake, a Skylake derivative"),
	INTEL6(0x66, 0x66, "Palm Cove (Cannon Lake)"),
	INTEL6(0x6a, 0x6a, "Sunny Cove (Ice Lake-SP)"), INTEL6(0x6c, 0x6c, "Sunny Cove (Ice Lake-D)"),
	INTEL6(0x7d, 0x7e, "Sunny Cove (Ice Lake)"), INTEL6(0x9d, 0x9d, "Sunny Cove (Ice Lake)"),
	INTEL6(0x8c, 0x8d, "Willow Cove (Tiger Lake)"),
	INTEL6(0xa7, 0xa8, "Cypress Cove (Rocket Lake)"),
	INTEL6(0x8f, 0x8f, "Golden Cove (Sapphire Rapids)"),
	INTEL6(0xcf, 0xcf, "Raptor Cove (Emerald Rapids)"),
	INTEL6(0xad, 0xae, "Redwood Cove (Granite Rapids)"),
	HYB(TACHO_VENDOR_INTEL, 6, 0x8a, 0x8a, "Sunny Cove + Tremont (Lakefield)",
	    "Sunny Cove", "Tremont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0x97, 0x97, "Golden Cove + Gracemont (Alder Lake)",
	    "Golden Cove", "Gracemont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0x9a, 0x9a, "Golden Cove + Gracemont (Alder Lake)",
	    "Golden Cove", "Gracemont", NULL),
	INTEL6(0xbe, 0xbe, "Gracemont (Alder Lake-N)"),
	HYB(TACHO_VENDOR_INTEL, 6, 0xb7, 0xb7, "Raptor Cove + Gracemont (Raptor Lake)",
	    "Raptor Cove", "Gracemont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0xba, 0xba, "Raptor Cove + Gracemont (Raptor Lake)",
	    "Raptor Cove", "Gracemont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0xbf, 0xbf, "Raptor Cove + Gracemont (Raptor Lake)",
	    "Raptor Cove", "Gracemont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0xaa, 0xac, "Redwood Cove + Crestmont (Meteor Lake)",
	    "Redwood Cove", "Crestmont", "Crestmont (low-power island)"),
	HYB(TACHO_VENDOR_INTEL, 6, 0xb5, 0xb5, "Lion Cove + Skymont (Arrow Lake)",
	    "Lion Cove", "Skymont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0xc5, 0xc6, "Lion Cove + Skymont (Arrow Lake)",
	    "Lion Cove", "Skymont", NULL),
	HYB(TACHO_VENDOR_INTEL, 6, 0xbd, 0xbd, "Lion Cove + Skymont (Lunar Lake)",
	    "Lion Cove", "Skymont", "Skymont (low-power island)"),
	HYB(TACHO_VENDOR_INTEL, 6, 0xcc, 0xcc, "Cougar Cove + Darkmont (Panther Lake)",
	    "Cougar Cove", "Darkmont", "Darkmont (low-power island)"),
	/* Atom line */
	INTEL6(0x1c, 0x1c, "Bonnell"), INTEL6(0x26, 0x26, "Bonnell"),
	INTEL6(0x27, 0x27, "Saltwell"), INTEL6(0x35, 0x36, "Saltwell"),
	INTEL6(0x37, 0x37, "Silvermont"), INTEL6(0x4a, 0x4a, "Silvermont"),
	INTEL6(0x4d, 0x4d, "Silvermont"), INTEL6(0x5a, 0x5a, "Silvermont"),
	INTEL6(0x5d, 0x5d, "Silvermont"),
	INTEL6(0x4c, 0x4c, "Airmont"), INTEL6(0x75, 0x75, "Airmont"),
	INTEL6(0x5c, 0x5c, "Goldmont"), INTEL6(0x5f, 0x5f, "Goldmont"),
	INTEL6(0x7a, 0x7a, "Goldmont Plus"),
	INTEL6(0x86, 0x86, "Tremont"), INTEL6(0x96, 0x96, "Tremont"), INTEL6(0x9c, 0x9c, "Tremont"),
	INTEL6(0xaf, 0xaf, "Crestmont (Sierra Forest)"), INTEL6(0xb6, 0xb6, "Crestmont (Grand Ridge)"),
	INTEL6(0xdd, 0xdd, "Darkmont (Clearwater Forest)"),
	INTEL6(0x57, 0x57, "Knights Landing"), INTEL6(0x85, 0x85, "Knights Mill"),
	/* NetBurst: family 0Fh */
	ANY(TACHO_VENDOR_INTEL, 0xf, 0, 1, "NetBurst (Willamette)"),
	ANY(TACHO_VENDOR_INTEL, 0xf, 2, 2, "NetBurst (Northwood)"),
	ANY(TACHO_VENDOR_INTEL, 0xf, 3, 4, "NetBurst (Prescott)"),
	ANY(TACHO_VENDOR_INTEL, 0xf, 6, 6, "NetBurst (Cedar Mill/Presler)"),
	{ TACHO_VENDOR_INTEL, 0x12, 0, 0xff, 0, 0xf, "Coyote Cove + Arctic Wolf (Nova Lake)",
	  "Coyote Cove", "Arctic Wolf", NULL, "family 18: names from Intel's announcements" },
	{ TACHO_VENDOR_INTEL, 0x13, 0, 0xff, 0, 0xf, "Panther Cove (Diamond Rapids)",
	  NULL, NULL, NULL, "family 19: names from Intel's announcements" },
	/* AMD */
	AMDF(4, 0, 0xf, "Am486/Am5x86"),
	AMDF(5, 0, 3, "K5"), AMDF(5, 6, 7, "K6"), AMDF(5, 8, 8, "K6-2"), AMDF(5, 9, 0xd, "K6-III"),
	AMDF(6, 0, 0xff, "K7"),
	AMDF(0xf, 0, 0xff, "K8"),
	AMDF(0x10, 0, 0xff, "K10"),
	AMDF(0x11, 0, 0xff, "K8 (Griffin)"),
	AMDF(0x12, 0, 0xff, "K10 (Llano)"),
	AMDF(0x14, 0, 0xff, "Bobcat"),
	AMDF(0x15, 0x00, 0x0f, "Bulldozer"), AMDF(0x15, 0x10, 0x1f, "Piledriver"),
	AMDF(0x15, 0x30, 0x3f, "Steamroller"), AMDF(0x15, 0x60, 0x7f, "Excavator"),
	AMDF(0x16, 0x00, 0x0f, "Jaguar"), AMDF(0x16, 0x30, 0x3f, "Puma"),
	AMDF(0x17, 0x08, 0x08, "Zen+"), AMDF(0x17, 0x18, 0x18, "Zen+"),
	AMDF(0x17, 0x00, 0x2f, "Zen"),
	AMDF(0x17, 0x30, 0xff, "Zen 2"),
	AMDF(0x19, 0x00, 0x0f, "Zen 3"), AMDF(0x19, 0x10, 0x1f, "Zen 4"),
	AMDF(0x19, 0x20, 0x2f, "Zen 3"), AMDF(0x19, 0x40, 0x4f, "Zen 3+"),
	AMDF(0x19, 0x50, 0x5f, "Zen 3"), AMDF(0x19, 0x60, 0x77, "Zen 4"),
	HYB(TACHO_VENDOR_AMD, 0x19, 0x78, 0x7f, "Zen 4 + Zen 4c", "Zen 4", "Zen 4c", NULL),
	AMDF(0x19, 0xa0, 0xaf, "Zen 4c"),
	HYB(TACHO_VENDOR_AMD, 0x1a, 0x00, 0x0f, "Zen 5", "Zen 5", "Zen 5c", NULL),
	AMDF(0x1a, 0x10, 0x1f, "Zen 5c"),
	HYB(TACHO_VENDOR_AMD, 0x1a, 0x20, 0x2f, "Zen 5 + Zen 5c", "Zen 5", "Zen 5c", NULL),
	AMDF(0x1a, 0x40, 0x4f, "Zen 5"),
	HYB(TACHO_VENDOR_AMD, 0x1a, 0x60, 0x6f, "Zen 5 + Zen 5c", "Zen 5", "Zen 5c", NULL),
	AMDF(0x1a, 0x70, 0x7f, "Zen 5"),
	ANY(TACHO_VENDOR_HYGON, 0x18, 0, 0xff, "Dhyana (Zen)"),
	/* Centaur / VIA / Zhaoxin */
	ANY(TACHO_VENDOR_VIA, 5, 4, 4, "WinChip C6"),
	ANY(TACHO_VENDOR_VIA, 5, 8, 9, "WinChip 2/3"),
	ANY(TACHO_VENDOR_VIA, 6, 6, 6, "C3 (Samuel)"),
	ANY(TACHO_VENDOR_VIA, 6, 7, 8, "C3 (Samuel 2/Ezra)"),
	ANY(TACHO_VENDOR_VIA, 6, 9, 9, "C3 (Nehemiah)"),
	ANY(TACHO_VENDOR_VIA, 6, 0xa, 0xd, "C7 (Esther)"),
	ANY(TACHO_VENDOR_VIA, 6, 0xf, 0xf, "Isaiah (Nano)"),
	ANY(TACHO_VENDOR_VIA, 7, 0x1b, 0x1b, "Wudaokou (Zhaoxin ZX-C+/KX-5000)"),
	ANY(TACHO_VENDOR_VIA, 7, 0x3b, 0x3b, "Lujiazui (Zhaoxin KX-6000)"),
	ANY(TACHO_VENDOR_VIA, 7, 0x5b, 0x5b, "Yongfeng (Zhaoxin KX-7000/KH-40000)"),
	ANY(TACHO_VENDOR_ZHAOXIN, 6, 0x0f, 0x0f, "ZhangJiang (Zhaoxin ZX-C)"),
	ANY(TACHO_VENDOR_ZHAOXIN, 6, 0x19, 0x19, "ZhangJiang (Zhaoxin ZX-C)"),
	ANY(TACHO_VENDOR_ZHAOXIN, 7, 0x1b, 0x1b, "Wudaokou (Zhaoxin KX-5000)"),
	ANY(TACHO_VENDOR_ZHAOXIN, 7, 0x3b, 0x3b, "Lujiazui (Zhaoxin KX-6000)"),
	ANY(TACHO_VENDOR_ZHAOXIN, 7, 0x5b, 0x5b, "Yongfeng (Zhaoxin KX-7000)"),
	ANY(TACHO_VENDOR_CYRIX, 5, 0, 0xf, "6x86"),
	ANY(TACHO_VENDOR_CYRIX, 6, 0, 0xf, "6x86MX/MII"),
	ANY(TACHO_VENDOR_TRANSMETA, 5, 0, 0xf, "Crusoe"),
	ANY(TACHO_VENDOR_TRANSMETA, 0xf, 0, 0xf, "Efficeon"),
};

static const struct uarch *find(const struct tacho_cpu_info *info)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		const struct uarch *u = &table[i];
		if (u->vendor == info->vendor && u->family == info->family &&
		    info->model >= u->model_lo && info->model <= u->model_hi &&
		    info->stepping >= u->step_lo && info->stepping <= u->step_hi)
			return u;
	}
	return NULL;
}

const char *tc_uarch_of_core(const struct tacho_cpu_info *info, enum tacho_core_kind kind,
			     uint32_t native_model)
{
	const struct uarch *u = find(info);

	(void)native_model;
	if (!u)
		return NULL;
	switch (kind) {
	case TACHO_CORE_PERFORMANCE: return u->perf ? u->perf : u->name;
	case TACHO_CORE_EFFICIENCY: return u->eff ? u->eff : u->name;
	case TACHO_CORE_LP_EFFICIENCY: return u->lp ? u->lp : u->eff ? u->eff : u->name;
	default: return u->name;
	}
}

void tc_cpu_uarch(struct tacho_cpu_info *info)
{
	const struct uarch *u = find(info);

	if (!u) {
		tc_cpu_note(info, "microarchitecture unknown to tacho for %s family %#x model %#x",
			    tacho_cpu_vendor_name(info->vendor), info->family, info->model);
		return;
	}
	info->uarch = u->name;
	info->uarch_note = u->note;
	for (unsigned k = 0; k < info->ncore_types; k++)
		info->core_types[k].uarch = tc_uarch_of_core(info, info->core_types[k].kind,
							     info->core_types[k].native_model_id);
}
