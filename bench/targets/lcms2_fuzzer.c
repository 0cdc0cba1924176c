/* A harness for Little CMS (lcms2) that does what OSS-Fuzz's cms_transform_fuzzer does, written
 * for this benchmark because the Debian source carries no harness: the input is opened as an ICC
 * profile from memory, a transform from it to built-in sRGB (8-bit RGB, perceptual intent) is
 * created, a few pixels go through it, and everything is freed. The input format follows the
 * profile's colour space: doubles for the connection spaces (Lab, XYZ), as OSS-Fuzz's harness
 * feeds Lab, 8 bits per channel otherwise. lcms's error handler is silenced: a fuzzed profile
 * makes it report on nearly every input, and the printing would set the pace. */
#include <stddef.h>
#include <stdint.h>

#include "lcms2.h"

#define PIXELS 4

static void quiet(cmsContext ctx, cmsUInt32Number code, const char *text)
{
    (void)ctx;
    (void)code;
    (void)text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int silenced;
    cmsHPROFILE in, srgb;
    cmsHTRANSFORM xform;
    cmsColorSpaceSignature space;
    cmsUInt32Number format;
    cmsBool pcs;
    uint8_t in8[PIXELS * cmsMAXCHANNELS], out[PIXELS * 3];
    double indbl[PIXELS * cmsMAXCHANNELS];
    int i;

    if (!silenced) {
        cmsSetLogErrorHandler(quiet);
        silenced = 1;
    }
    if (size > UINT32_MAX) return 0;
    in = cmsOpenProfileFromMem(data, (cmsUInt32Number)size);
    if (in == NULL) return 0;
    srgb = cmsCreate_sRGBProfile();
    if (srgb == NULL) {
        cmsCloseProfile(in);
        return 0;
    }
    space = cmsGetColorSpace(in);
    pcs = space == cmsSigLabData || space == cmsSigXYZData;
    format = cmsFormatterForColorspaceOfProfile(in, pcs ? 0 : 1, pcs);
    xform = cmsCreateTransform(in, format, srgb, TYPE_RGB_8, INTENT_PERCEPTUAL, 0);
    cmsCloseProfile(in);
    cmsCloseProfile(srgb);
    if (xform == NULL) return 0;
    /* Values spread over each channel's range, different for each pixel and channel. */
    for (i = 0; i < PIXELS * cmsMAXCHANNELS; i++) {
        in8[i] = (uint8_t)(i * 85 % 256);
        indbl[i] = (double)(i % 5) * 25.0 - 25.0;
    }
    cmsDoTransform(xform, pcs ? (const void *)indbl : (const void *)in8, out, PIXELS);
    cmsDeleteTransform(xform);
    return 0;
}
