//go:build amd64 && !purego

#include "textflag.h"

// func copyPanelAVX512(dst, src *float32, ld, kc, w int, loadMask, storeMask uint32)
//
// For p < kc: dst[p*w : p*w+w] = src[p*ld : p*ld+32] under loadMask (lanes
// outside it read as 0, memory not touched), stored under storeMask (the
// first w lanes). w ≤ 32.
TEXT ·copyPanelAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ kc+24(FP), CX
	MOVQ w+32(FP), R8
	SHLQ $2, R8
	MOVL loadMask+40(FP), AX
	KMOVW AX, K1
	SHRL $16, AX
	KMOVW AX, K2
	MOVL storeMask+44(FP), AX
	KMOVW AX, K3
	SHRL $16, AX
	KMOVW AX, K4
	TESTQ CX, CX
	JEQ copy_done

copy_loop:
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VMOVUPS Z0, K3, (DI)
	VMOVUPS Z1, K4, 64(DI)
	ADDQ DX, SI
	ADDQ R8, DI
	DECQ CX
	JNE copy_loop

copy_done:
	VZEROUPPER
	RET

// func transPanelAVX512(dst, src *float32, idx *int32, kc, w int, rowMask, storeMask uint32)
//
// For p < kc: dst[p*w+r] = src[idx[r]+p] for rows r in rowMask, 0 for the
// other lanes, stored under storeMask (the first w lanes). idx[r] = r*ld
// holds 32 row offsets; w ≤ 32.
TEXT ·transPanelAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), AX
	VMOVDQU32 (AX), Z2
	VMOVDQU32 64(AX), Z3
	MOVQ kc+24(FP), CX
	MOVQ w+32(FP), R8
	SHLQ $2, R8
	MOVL rowMask+40(FP), AX
	MOVL AX, BX
	SHRL $16, BX
	ANDL $0xffff, AX
	MOVL storeMask+44(FP), DX
	KMOVW DX, K3
	SHRL $16, DX
	KMOVW DX, K4
	TESTQ CX, CX
	JEQ trans_done
	TESTL DX, DX
	JEQ trans_loop16

trans_loop32:
	KMOVW AX, K1
	KMOVW BX, K2
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VGATHERDPS (SI)(Z2*4), K1, Z0
	VGATHERDPS (SI)(Z3*4), K2, Z1
	VMOVUPS Z0, K3, (DI)
	VMOVUPS Z1, K4, 64(DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNE trans_loop32
	JMP trans_done

trans_loop16:
	KMOVW AX, K1
	VPXORD Z0, Z0, Z0
	VGATHERDPS (SI)(Z2*4), K1, Z0
	VMOVUPS Z0, K3, (DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNE trans_loop16

trans_done:
	VZEROUPPER
	RET

// func copyPanelAVX2(dst, src *float32, ld, kc, w int, masks *int32)
//
// copyPanelAVX512 for AVX2: masks holds four 8-lane masks (load low/high
// half, store low/high half); masked-off loads read 0 and touch no memory.
TEXT ·copyPanelAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ kc+24(FP), CX
	MOVQ w+32(FP), R8
	SHLQ $2, R8
	MOVQ masks+40(FP), AX
	VMOVDQU (AX), Y4
	VMOVDQU 32(AX), Y5
	VMOVDQU 64(AX), Y6
	VMOVDQU 96(AX), Y7
	TESTQ CX, CX
	JEQ copy2_done

copy2_loop:
	VMASKMOVPS (SI), Y4, Y0
	VMASKMOVPS 32(SI), Y5, Y1
	VMASKMOVPS Y0, Y6, (DI)
	VMASKMOVPS Y1, Y7, 32(DI)
	ADDQ DX, SI
	ADDQ R8, DI
	DECQ CX
	JNE copy2_loop

copy2_done:
	VZEROUPPER
	RET

// func transPanelAVX2(dst, src *float32, idx *int32, kc, w int, masks *int32)
//
// transPanelAVX512 for AVX2: idx holds 16 row offsets, masks four 8-lane
// masks (rows low/high half, store low/high half).
TEXT ·transPanelAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), AX
	VMOVDQU (AX), Y2
	VMOVDQU 32(AX), Y3
	MOVQ kc+24(FP), CX
	MOVQ w+32(FP), R8
	SHLQ $2, R8
	MOVQ masks+40(FP), AX
	VMOVDQU (AX), Y8
	VMOVDQU 32(AX), Y9
	VMOVDQU 64(AX), Y6
	VMOVDQU 96(AX), Y7
	TESTQ CX, CX
	JEQ trans2_done
	CMPQ R8, $32
	JLE trans2_loop8

trans2_loop16:
	VMOVDQU Y8, Y10
	VMOVDQU Y9, Y11
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VGATHERDPS Y10, (SI)(Y2*4), Y0
	VGATHERDPS Y11, (SI)(Y3*4), Y1
	VMASKMOVPS Y0, Y6, (DI)
	VMASKMOVPS Y1, Y7, 32(DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNE trans2_loop16
	JMP trans2_done

trans2_loop8:
	VMOVDQU Y8, Y10
	VPXOR Y0, Y0, Y0
	VGATHERDPS Y10, (SI)(Y2*4), Y0
	VMASKMOVPS Y0, Y6, (DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNE trans2_loop8

trans2_done:
	VZEROUPPER
	RET
