/* A FreeType harness for bench/execs (bench/targets/freetype2.sh). Debian's freetype source has
 * no fuzzer: OSS-Fuzz's live in the separate freetype2-testing repository. This one does what
 * their face-loading fuzzers do in outline: the input is a font file in memory; each of its
 * faces (at most MAX_FACES) is opened, sized, and its first MAX_GLYPHS glyphs are loaded with
 * the default flags (hinting, the drivers' own loaders) and rendered to 8-bit coverage. */

#include <stddef.h>
#include <stdint.h>

#include <ft2build.h>
#include FT_FREETYPE_H

#define MAX_FACES  4
#define MAX_GLYPHS 50

static FT_Library library;

/* Sizes the face: 16 pt at 72 dpi for scalable faces; bitmap-only faces (PCF, BDF, FNT), which
 * have no such size, get their first strike instead. */
static int set_size(FT_Face face)
{
    if (FT_Set_Char_Size(face, 0, 16 * 64, 72, 72) == 0) return 1;
    return face->num_fixed_sizes > 0 && FT_Select_Size(face, 0) == 0;
}

static void fuzz_face(FT_Face face)
{
    FT_Long g, glyphs = face->num_glyphs < MAX_GLYPHS ? face->num_glyphs : MAX_GLYPHS;

    if (!set_size(face)) return;
    for (g = 0; g < glyphs; g++) {
        if (FT_Load_Glyph(face, (FT_UInt)g, FT_LOAD_DEFAULT) != 0) continue;
        FT_Render_Glyph(face->glyph, FT_RENDER_MODE_NORMAL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FT_Face face;
    FT_Long faces, i;

    /* One library for the whole campaign, as a program that renders text would keep it. */
    if (!library && FT_Init_FreeType(&library) != 0) return 0;
    if (FT_New_Memory_Face(library, data, (FT_Long)size, 0, &face) != 0) return 0;
    faces = face->num_faces < MAX_FACES ? face->num_faces : MAX_FACES;
    fuzz_face(face);
    FT_Done_Face(face);
    for (i = 1; i < faces; i++) {
        if (FT_New_Memory_Face(library, data, (FT_Long)size, i, &face) != 0) continue;
        fuzz_face(face);
        FT_Done_Face(face);
    }
    return 0;
}
