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
