; cputest: a 65816 exerciser for comparing rpt's recompiled code with bsnes frame by frame.
;
; Every opcode but STP and WAI runs in every addressing mode it has, in the four register widths
; (M and X each 0 and 1) in native mode, and many of them in emulation mode too. After each run
; of a tested instruction a logger stores A, X, Y, S, D, P, DBR, E and the memory operand as one
; 16-byte record in a log in WRAM, so a wrong flag or a wrong byte shows up as a WRAM difference.
;
; The unit of the program is a *group*: one instruction (or a few, when an instruction needs a
; setting-up partner, like RTS) in one addressing "world" (D, DBR, S, the memory operand's
; address and the index registers the mode needs), run for each width, several times each with
; registers, flags and operand drawn from a deterministic generator. The groups are listed at the
; end of this file, one macro line each.
;
; The program is written so that a static recompiler can follow all of it from the reset vector:
;
; - Every group is a subroutine of its own (grp_N), and so is each width of it; a driver per
;   bank calls the groups one after the other, through routines of at most 40 JSRs. The longest
;   routine is the reset code (about 110 instructions); a width routine is about 15 and the
;   tested code.
; - No data follows a call: a group's parameters are a record in bank $00 whose address the group
;   routine passes in X. Every subroutine returns to just after its call with the stack as it
;   found it and in the widths it was called in (the tested code excepted: a tested JSR, PER or
;   push leaves its bytes behind, and the width routine puts S back from a variable afterwards).
; - The widths each tested instruction runs in are set by REP and SEP (in emulation mode by SEC;
;   XCE) in the width's routine, in straight-line code right before it. The random flags come
;   from a subroutine that pulls them with a PLP of its own PHP's byte, whose M and X bits it
;   keeps, so it returns in the widths it was called in.
; - The tests of what changes the widths keep them known: XCE has SEC or CLC right before it,
;   and PLP pulls a byte a PHP pushed in the target widths (PLP_TO). Indirect jumps and calls and
;   returns to pushed addresses run inside a subroutine of the tested code, so control comes back
;   to just after a call even where a recompiler cannot know the target.
;
; Frames: before each iteration the harness waits for the NMI (WAI) when BUDGET iterations have
; run since the last wait, so every frame's work ends long before vertical blank and at every
; frame boundary the CPU sits in WAI. The NMI handler counts frames and, should an NMI ever
; arrive while an iteration is running, counts an overrun (v_overrun must stay 0).
;
; WRAM while and after the tests run (bank $00 $0000-$1FFF is the same RAM as $7E:0000-$1FFF):
;
;   $7E:0000-$1BFF  the tests' direct pages, stacks and data (filled with a pattern at start)
;   $7E:1C00-$1CFF  harness variables (HV; the harness's direct page)
;   $7E:1D00-$1FFF  harness stack
;   $7E:2000-$7FFF  test data (pattern), mostly $7E:4000-$4FFF
;   $7E:8000-$F7FF  results log, second part (used when the first is full)
;   $7E:F800-$FEFF  quirk log: tests where bsnes v094 is known to differ from the hardware
;   $7E:FF00-$FFFF  test data for bank crossings (pattern)
;   $7F:0000-$00FF  test data for bank crossings (pattern)
;   $7F:0100-$FFFF  results log, first part
;
; A log record (16 bytes): +0 A, +2 X, +4 Y, +6 S, +8 D (words); +10 P, +11 DBR (bytes);
; +12 the memory operand (word); +14 E (byte); +15 the group number's low byte.
; X and Y are stored as 16 bits: with X=1 their high bytes are 0, as the CPU keeps them. A is
; the whole 16-bit accumulator (B included). S is the stack pointer right after the tested code;
; P is the status register then (in emulation mode PHP's copy, with bits 4 and 5 set).

.include "common.inc"

; ---------------------------------------------------------------------------------------------
; Harness constants and variables
; ---------------------------------------------------------------------------------------------

HV      = $1C00         ; the harness page; the harness runs with D = HV
HSTACK  = $1FFF         ; the harness stack's top
BUDGET  = 20            ; iterations between frame waits (about half a frame in bsnes)

LOG1    = $7F0100       ; first part of the log, up to $7F:FFFF
LOG2    = $7E8000       ; second part, up to LOG2_END
LOG2_END = $F800
QLOG    = $7EF800       ; quirk log, up to QLOG_END
QLOG_END = $FF00

; Direct-page offsets of the variables in HV.
v_frame   = $00         ; word: NMIs taken
v_busy    = $02         ; word: 1 while the tests run (the NMI handler checks it)
v_overrun = $04         ; word: NMIs taken while busy (must stay 0)
v_rng     = $06         ; word: generator state
v_logp    = $08         ; long: next record in the log
v_qlogp   = $0C         ; long: next record in the quirk log
v_group   = $10         ; word: groups started
v_left    = $12         ; word: iterations left in this width
v_budget  = $14         ; word: iterations since the last frame wait
v_hs      = $16         ; word: the harness's S in the width routine, while the test runs
v_tmp     = $1A         ; word: scratch
; The group's parameters, copied by group_begin from the record X points to (P_SIZE bytes).
v_par     = $20
v_flags   = $20         ; byte: F_* below
v_seeds   = $21         ; byte: iterations per width
v_ea      = $22         ; long: address of the memory operand
v_d       = $25         ; word: D for the test
v_dbr     = $27         ; byte: DBR for the test
v_s       = $28         ; word: S for the test
v_fx      = $2A         ; word: X when F_FIXX
v_fy      = $2C         ; word: Y when F_FIXY
v_fa      = $2E         ; word: A when F_FIXA; the first table row when F_TAB
P_SIZE    = $10
; This iteration's values.
v_gen_a   = $30
v_gen_x   = $32
v_gen_y   = $34
v_gen_m   = $36
v_gen_p   = $38         ; N, V, D, I, Z, C (M and X bits 0)
v_k       = $3A         ; word: iteration number within the width
v_full    = $3C         ; word: nonzero once the log is full
v_rt      = $3E         ; word: the generator's scratch
v_rec     = $40         ; 16 bytes: the record being built
v_done    = $50         ; word: $600D once every group has run
v_done_frame = $52      ; word: v_frame then

; Record layout.
R_A   = 0
R_X   = 2
R_Y   = 4
R_S   = 6
R_D   = 8
R_P   = 10
R_DBR = 11
R_M   = 12
R_E   = 14
R_G   = 15

; Group flags.
F_EMU   = $01           ; run in emulation mode (one width: 8-bit)
F_FIXA  = $02           ; A is v_fa, not drawn
F_FIXX  = $04           ; X is v_fx (the index an addressing mode needs)
F_FIXY  = $08           ; Y is v_fy
F_DEC   = $10           ; decimal flag set
F_TAB   = $20           ; A and the operand from dec_pairs, carry alternating
F_QUIRK = $40           ; log into the quirk log
F_MONLY = $80           ; only the widths M=0/X=0 and M=1/X=0

; ---------------------------------------------------------------------------------------------
; Macros that describe a group
; ---------------------------------------------------------------------------------------------

; Groups are numbered in the order they are assembled; group n's routine is grp_n.
G_NEXT .set 0

; CFG ea, d, dbr, s: a new group's world, with every register drawn and 3 iterations per width.
.macro CFG ea, dval, dbr, sval
        T_EA    .set ea
        T_D     .set dval
        T_DBR   .set dbr
        T_S     .set sval
        T_FLAGS .set 0
        T_SEEDS .set 3
        T_X     .set 0
        T_Y     .set 0
        T_A     .set 0
        T_IMM   .set 0
        T_ENDE  .set 0
.endmacro

; World N0: native, D = $0000, DBR = $7E, S = $1BF0.
.macro N0 ea
        CFG ea, $0000, $7E, $1BF0
.endmacro

; World N1: native, D = $12F8 (low byte not 0, so direct page operands cross pages), DBR = $00,
; S = $1AF0.
.macro N1 ea
        CFG ea, $12F8, $00, $1AF0
.endmacro

; World E0: emulation mode, D = $0000, DBR = $7E, S = $01F0.
.macro E0 ea
        CFG ea, $0000, $7E, $01F0
        T_FLAGS .set F_EMU
        T_ENDE  .set 1
.endmacro

.macro FIXA v
        T_FLAGS .set T_FLAGS | F_FIXA
        T_A     .set v
.endmacro
.macro FIXX v
        T_FLAGS .set T_FLAGS | F_FIXX
        T_X     .set v
.endmacro
.macro FIXY v
        T_FLAGS .set T_FLAGS | F_FIXY
        T_Y     .set v
.endmacro
.macro FLAG f
        T_FLAGS .set T_FLAGS | f
.endmacro
.macro SEEDS n
        T_SEEDS .set n
.endmacro
; The immediate operand of the next group: bodies write #IMM_M (sized by M) or #IMM_X (by X).
.macro IMM v
        T_IMM .set v
.endmacro
; The tested code ends in emulation mode (ENDS_EMU) or native mode (ENDS_NATIVE), not in the
; mode it started in (only the XCE groups).
.macro ENDS_EMU
        T_ENDE .set 1
.endmacro
.macro ENDS_NATIVE
        T_ENDE .set 0
.endmacro

; RUN body: emits the group configured above as the routine grp_n (n = G_NEXT): its parameter
; record in bank $00, then the routine, which calls group_begin and one routine per width (in
; emulation mode the one width's loop is in the group routine itself). `body` is one instruction
; in braces or the name of a macro; it runs once per iteration with the test's registers and must
; fall through to its end. Assembled and left with .a16 .i16.
.macro RUN body
        .local par, w00, w10, w20, w30
        .pushseg
        .segment "RODATA"
par:    .byte T_FLAGS, T_SEEDS
        .faraddr T_EA
        .word T_D
        .byte T_DBR
        .word T_S, T_X, T_Y, T_A
        .popseg
        .a16
        .i16
.ident(.sprintf("grp_%d", G_NEXT)):
        G_NEXT .set G_NEXT + 1
        ldx #.loword(par)
        jsl group_begin
        .if T_FLAGS & F_EMU
            WIDTH_LOOP {body}, $30
            rts
        .elseif T_FLAGS & F_MONLY
            jsr w00
            jsr w20
            rts
w00:        WIDTH_LOOP {body}, $00
            rts
w20:        WIDTH_LOOP {body}, $20
            rts
        .else
            jsr w00
            jsr w10
            jsr w20
            jsr w30
            rts
w00:        WIDTH_LOOP {body}, $00
            rts
w10:        WIDTH_LOOP {body}, $10
            rts
w20:        WIDTH_LOOP {body}, $20
            rts
w30:        WIDTH_LOOP {body}, $30
            rts
        .endif
        .a16
        .i16
.endmacro

; One width of a group: the iteration loop, entered and left native with .a16 .i16, D = HV,
; DBR = $00 and S on the harness stack. T_W is the width while the body is assembled ($30 in
; emulation mode).
;
; prep draws the iteration's values, writes the operand and the bytes above the test's S, waits
; for a frame when the budget is spent and returns the test's S in A. On the test's stack,
; enter_n (enter_e in emulation mode) loads D, DBR, X, Y, A and the drawn flags and returns in
; the widths it was called in; REP and SEP then set this width's M and X (in emulation mode SEC;
; XCE before enter_e). After the tested code, PHP keeps P, REP (or CLC; XCE; REP from emulation
; mode) goes back to native 16-bit with the carry = E, capture stores the registers in v_rec and
; returns the harness's S, and finish logs the record and returns Z=1 when the width is done.
.macro WIDTH_LOOP body, w
        .local loop
loop:
        .a16
        .i16
        jsl prep
        tcs
        .if T_FLAGS & F_EMU
            sec
            xce
            .a8
            .i8
            jsl enter_e
            IMM_M .set T_IMM & $FF
            IMM_X .set T_IMM & $FF
        .else
            jsl enter_n
            SET_WIDTHS w
            .if w & $20
                IMM_M .set T_IMM & $FF
            .else
                IMM_M .set T_IMM & $FFFF
            .endif
            .if w & $10
                IMM_X .set T_IMM & $FF
            .else
                IMM_X .set T_IMM & $FFFF
            .endif
        .endif
        T_W .set w
        body
        .if T_ENDE
            php
            clc
            xce                 ; native; carry = E (1)
            rep #$38
        .else
            php
            rep #$39            ; carry = E (0)
        .endif
        .a16
        .i16
        jsl capture
        tcs
        jsl finish
        bne loop
.endmacro

; SET_WIDTHS w: REP and SEP that set M and X as w says ($00, $10, $20 or $30), in native mode.
.macro SET_WIDTHS w
        .if w = $00
            rep #$30
        .elseif w = $10
            rep #$20
            sep #$10
        .elseif w = $20
            rep #$10
            sep #$20
        .else
            sep #$30
        .endif
        ASM_WIDTHS w
.endmacro

; ASM_WIDTHS w: tells the assembler the widths w.
.macro ASM_WIDTHS w
        .if w & $20
            .a8
        .else
            .a16
        .endif
        .if w & $10
            .i8
        .else
            .i16
        .endif
.endmacro

; DRIVER name, first, last: the routine `name` calls grp_first ... grp_(last-1) in order, through
; routines of at most 40 calls each (name_0, name_1, ...), and returns with `ret` (rts or rtl).
.macro DRIVER name, first, last, ret
        .a16
        .i16
name:
        .repeat (last - first + 39) / 40, c
            jsr .ident(.sprintf("%s_%d", .string(name), c))
        .endrepeat
        ret
        .repeat (last - first + 39) / 40, c
.ident(.sprintf("%s_%d", .string(name), c)):
            .repeat 40, i
                .if first + c * 40 + i < last
                    jsr .ident(.sprintf("grp_%d", first + c * 40 + i))
                .endif
            .endrepeat
            rts
        .endrepeat
.endmacro
; ---------------------------------------------------------------------------------------------
; Families of groups, world N0 unless the name says otherwise
; ---------------------------------------------------------------------------------------------

; Where the N0 modes find their operand (the pointers are set by setup_world):
;   dp        $10            -> $00:0010
;   dp,X      $F0,X  X=$30   -> $00:0120 (native: no page wrap)
;   abs       $4000          -> $7E:4000
;   abs,X/Y   $40F0  +$30    -> $7E:4120 (page crossing)
;   long      $7F0040        -> $7F:0040
;   long,X    $7EFFF0 +$30   -> $7F:0020 (bank crossing)
;   (dp)      ($20)          -> $7E:4200
;   (dp),Y    ($22)  +$30    -> $7E:4320
;   [dp]      [$24]          -> $7F:0060
;   [dp],Y    [$28]  +$30    -> $7F:0020 (bank crossing)
;   (dp,X)    ($10,X) X=$30  -> pointer at $40 -> $7E:4400
;   sr,S      $03,S          -> $00:1BF3
;   (sr,S),Y  ($05,S) +$30   -> pointer at $1BF5 -> $7E:4520

; An accumulator operation with three immediates (8-bit widths use the low byte).
.macro ALU_IMM op
        N0 $7E4000
        IMM $0000
        RUN {op #IMM_M}
        N0 $7E4000
        IMM $80FF
        RUN {op #IMM_M}
        N0 $7E4000
        IMM $017F
        RUN {op #IMM_M}
.endmacro

; An accumulator operation in each of its 14 memory modes.
.macro ALU_MEM op
        N0 $000010
        RUN {op $10}
        N0 $000120
        FIXX $0030
        RUN {op $F0,x}
        N0 $7E4000
        RUN {op a:$4000}
        N0 $7E4120
        FIXX $0030
        RUN {op $40F0,x}
        N0 $7E4120
        FIXY $0030
        RUN {op $40F0,y}
        N0 $7F0040
        RUN {op f:$7F0040}
        N0 $7F0020
        FIXX $0030
        RUN {op f:$7EFFF0,x}
        N0 $7E4200
        RUN {op ($20)}
        N0 $7E4320
        FIXY $0030
        RUN {op ($22),y}
        N0 $7F0060
        RUN {op [$24]}
        N0 $7F0020
        FIXY $0030
        RUN {op [$28],y}
        N0 $7E4400
        FIXX $0030
        RUN {op ($10,x)}
        N0 $001BF3
        RUN {op $03,s}
        N0 $7E4520
        FIXY $0030
        RUN {op ($05,s),y}
.endmacro

; The direct page and stack modes again in world N1 (D = $12F8, DBR = $00):
;   dp $10 -> $1308; dp,X $F0+$30 -> $1418; abs $0800; abs,X $08F0+$30 -> $0920;
;   ($20) -> ptr $1318 -> $0A00; ($22),Y -> ptr $131A -> $0AF0+$30; [$24] -> ptr $131C -> $7F:0070;
;   [$28],Y -> ptr $1320 -> $7E:46F0+$30; ($08,X) -> ptr $1330 -> $0C00; $03,S -> $1AF3;
;   ($05,S),Y -> ptr $1AF5 -> $0DF0+$30.
.macro ALU_N1 op
        N1 $001308
        RUN {op $10}
        N1 $001418
        FIXX $0030
        RUN {op $F0,x}
        N1 $000800
        RUN {op a:$0800}
        N1 $000920
        FIXX $0030
        RUN {op $08F0,x}
        N1 $000A00
        RUN {op ($20)}
        N1 $000B20
        FIXY $0030
        RUN {op ($22),y}
        N1 $7F0070
        RUN {op [$24]}
        N1 $7E4720
        FIXY $0030
        RUN {op [$28],y}
        N1 $000C00
        FIXX $0030
        RUN {op ($08,x)}
        N1 $001AF3
        RUN {op $03,s}
        N1 $000E20
        FIXY $0030
        RUN {op ($05,s),y}
.endmacro

; Page and bank crossings beyond those in ALU_MEM.
.macro ALU_CROSS op
        N0 $7F0020              ; abs,X from bank $7E into $7F
        FIXX $0030
        RUN {op $FFF0,x}
        N0 $7F0020              ; abs,Y likewise
        FIXY $0030
        RUN {op $FFF0,y}
        N0 $7F0020              ; (dp),Y: pointer $FFF0 in bank $7E, into $7F
        FIXY $0030
        RUN {op ($2C),y}
        N0 $7EFFFF              ; a 16-bit operand split between $7E:FFFF and $7F:0000
        RUN {op a:$FFFF}
        N0 $800070              ; long,X from bank $7F into $80 (low RAM again: $0070)
        FIXX $0080
        RUN {op f:$7FFFF0,x}
        N0 $7F0010              ; abs,X with a 16-bit index (X=$C010; 8-bit X gives $10)
        FIXX $C010
        RUN {op a:$4000,x}
.endmacro

; Read-modify-write: accumulator, dp, dp,X, abs, abs,X.
.macro RMW_ALL op
        N0 $7E4000
        RUN {op a}
        N0 $000010
        RUN {op $10}
        N0 $000120
        FIXX $0030
        RUN {op $F0,x}
        N0 $7E4000
        RUN {op a:$4000}
        N0 $7E4120
        FIXX $0030
        RUN {op $40F0,x}
.endmacro

; A one-byte instruction with nothing to configure.
.macro IMPLIED op
        N0 $7E4000
        RUN {op}
.endmacro

; A conditional branch forward: the XBA runs only when the branch is not taken.
.macro B_FWD op
        op :+
        xba
:
.endmacro

; A conditional branch backward: taken, it goes back to an XBA and then on; not taken, on.
.macro B_BACK op
        bra :++
:       xba
        bra :++
:       op :--
:
.endmacro

.macro BRL_FWD
        brl :+
        xba
:
.endmacro

.macro BRL_BACK
        bra :++
:       xba
        bra :++
:       brl :--
:
.endmacro

.macro J_ABS
        jmp :+
        xba
:
.endmacro

.macro J_LONG
        jml :+
        xba
:
.endmacro

; The indirect jumps and calls, and the returns to an address the code pushed itself, run inside a
; subroutine of the tested code, so that control always comes back to just after a call: the
; recompiler's view of calls and returns stays true, even where it cannot know the target.

; jmp (abs): the pointer is read from bank $00 (segment PTR0), the target is in this bank. The
; XBA runs only if the jump goes wrong.
.macro J_IND
        .local ptr, sub, target, done
        .pushseg
        .segment "PTR0"
ptr:    .word .loword(target)
        .popseg
        jsr sub
        bra done
sub:    jmp (.loword(ptr))
        xba
target: rts
done:
.endmacro

; jml [abs]: a three-byte pointer in bank $00.
.macro J_INDL
        .local ptr, sub, target, done
        .pushseg
        .segment "PTR0"
ptr:    .faraddr target
        .popseg
        jsr sub
        bra done
sub:    jml [.loword(ptr)]
        xba
target: rts
done:
.endmacro

; jmp (abs,X) with X = 2: the table is read from the program bank. (The tables lie after their
; targets, so that a linear sweep of the code from the jump on finds the target's RTS.)
.macro J_INDX
        .local table, sub, target, done
        jsr sub
        bra done
sub:    jmp (.loword(table),x)
        xba
target: rts
table:  .word 0, .loword(target)
done:
.endmacro

; jsr (abs,X) with X = 2; the return address the call pushed stays in memory below S (the
; memory operand).
.macro J_JSR_INDX
        .local table, target, done
        jsr (.loword(table),x)
        bra done
target: rts
table:  .word 0, .loword(target)
done:
.endmacro

; jsr and rts; the pushed return address stays in memory below S (the memory operand).
.macro J_JSR
        .local sub, done
        jsr sub
        bra done
sub:    rts
done:
.endmacro

.macro J_JSL
        .local sub, done
        jsl sub
        bra done
sub:    rtl
done:
.endmacro

; jsl to a subroutine in bank $00 that swaps A's bytes and returns with rtl.
.macro J_JSL_FAR
        jsl far_xba
.endmacro

; rts to an address pushed by per: the one after the jsr, whose return address stays on the
; stack (S ends 2 lower).
.macro R_RTS
        .local sub, back, done
        jsr sub
back:   bra done
sub:    per back-1
        rts
done:
.endmacro

; rtl to an address pushed by phk and per (the jsl's three bytes stay on the stack).
.macro R_RTL
        .local sub, back, done
        jsl sub
back:   bra done
sub:    phk
        per back-1
        rtl
done:
.endmacro

; Native rti pulls P, the PC and the program bank.
.macro R_RTI
        .local sub, back, done
        jsl sub
back:   bra done
sub:    phk
        per back
        php
        rti
done:
.endmacro

; Emulation-mode rti pulls P and the PC only.
.macro R_RTI_E
        .local sub, back, done
        jsr sub
back:   bra done
sub:    per back
        php
        rti
done:
.endmacro

; XCE with the carry set (into emulation mode) or clear (native stays native).
.macro XCE_SEC
        sec
        xce
.endmacro
.macro XCE_CLC
        clc
        xce
.endmacro

; pei pushes the word at $30 (the memory operand); pld then shows it in D.
.macro S_PEI_PLD
        pei ($30)
        pld
.endmacro

; Decimal-mode ADC or SBC over dec_pairs: 6 groups of 4 pairs, each pair with carry 0 and 1,
; M=0 and M=1 (world N0, operand at $7E:4000).
.macro DEC_TABLE op
        .repeat 6, i
            N0 $7E4000
            FLAG F_TAB | F_DEC | F_MONLY
            FIXA i * 4
            T_FLAGS .set T_FLAGS & ~F_FIXA
            SEEDS 8
            RUN {op a:$4000}
        .endrepeat
.endmacro

; The same in emulation mode (8-bit).
.macro DEC_TABLE_E op
        .repeat 6, i
            E0 $7E4000
            FLAG F_TAB | F_DEC
            FIXA i * 4
            T_FLAGS .set T_FLAGS & ~F_FIXA
            SEEDS 8
            RUN {op a:$4000}
        .endrepeat
.endmacro

; Emulation mode (world E0) operands:
;   dp $10 -> $0010; dp,X $F0+$60 -> $0050 (wraps within page 0); abs and long as N0;
;   ($FF) -> pointer bytes $00FF and $0000 (wraps) -> $7E:4680; ($FF),Y +$30 -> $7E:46B0;
;   sr,S $03,S -> $01F3; ($05,S),Y -> pointer at $01F5 -> $7E:44F0+$30.
.macro E_MEM op
        E0 $000010
        RUN {op $10}
        E0 $000050
        FIXX $0060
        RUN {op $F0,x}
        E0 $7E4000
        RUN {op a:$4000}
        E0 $7E4120
        FIXX $0030
        RUN {op $40F0,x}
        E0 $7E4120
        FIXY $0030
        RUN {op $40F0,y}
        E0 $7F0040
        RUN {op f:$7F0040}
        E0 $7F0020
        FIXX $0030
        RUN {op f:$7EFFF0,x}
        E0 $7E4200
        RUN {op ($20)}
        E0 $7E4320
        FIXY $0030
        RUN {op ($22),y}
        E0 $7E4680
        RUN {op ($FF)}
        E0 $7E46B0
        FIXY $0030
        RUN {op ($FF),y}
        E0 $7F0060
        RUN {op [$24]}
        E0 $7F0020
        FIXY $0030
        RUN {op [$28],y}
        E0 $7E4400
        FIXX $0030
        RUN {op ($10,x)}
        E0 $0001F3
        RUN {op $03,s}
        E0 $7E4520
        FIXY $0030
        RUN {op ($05,s),y}
.endmacro

; Emulation mode with D = $0100 (low byte 0: wraps within page 1) and D = $02C0 (low byte not
; 0: no wrapping): dp, dp,X and (dp) each.
.macro E_DPAGES op
        E0 $000110
        T_D .set $0100
        RUN {op $10}
        E0 $000150
        T_D .set $0100
        FIXX $0060
        RUN {op $F0,x}
        E0 $7E4800
        T_D .set $0100
        RUN {op ($A0)}
        E0 $0002D0
        T_D .set $02C0
        RUN {op $10}
        E0 $000410
        T_D .set $02C0
        FIXX $0060
        RUN {op $F0,x}
        E0 $7E4840
        T_D .set $02C0
        RUN {op ($3F)}
.endmacro

; Emulation-mode stack wrapping of the 6502 instructions: with S = $0100 a push writes $0100 and
; S becomes $01FF; with S = $01FF a pull reads $0100 and S becomes $0100 (the PHP after it
; wraps back, so the logger's own pushes stay inside page 1).
.macro E_PUSH_WRAP op
        ldx #$00
        txs
        op
.endmacro
.macro E_PULL_WRAP op
        ldx #$FF
        txs
        op
        php
.endmacro

; PLP of a byte with drawn flags, in a form whose widths afterwards are known statically: PHP
; pushes P in the widths t (REP and SEP go there and back when t is not this width), the flag
; bits of its byte are replaced with those of the drawn byte above S (bits 4 and 5 stay t's),
; and PLP pulls it. So PLP goes from this width to t, as a PLP of a byte with t's bits would,
; and S ends where it started. (In emulation mode t is $30 and M and X stay 1 whatever.)
.macro PLP_TO t
        .if T_W <> t
            SET_WIDTHS t
        .endif
        php
        .if T_W <> t
            SET_WIDTHS T_W
        .endif
        pha
        .if T_W & $20
            lda 3,s             ; the drawn byte (S is 2 lower: A and P)
            eor 2,s
            and #$CF
            eor 2,s
            sta 2,s
        .else
            lda 4,s             ; the drawn byte and the one above it (S is 3 lower)
            eor 3,s
            and #$00CF
            eor 3,s
            sta 3,s
        .endif
        pla
        plp
        ASM_WIDTHS t
.endmacro

; PLP in emulation mode with S = $01FF, in a form whose widths afterwards are known statically:
; PHP at S = $0100 writes $0100 and wraps S to $01FF, the operand's low byte goes back into $0100
; (through X) and PLP pulls it from there (wrapping to S = $0100); the PHP after it wraps back.
.macro E_PULL_PLP
        ldx #$00
        txs
        ldx a:$0100
        php
        stx a:$0100
        plp
        php
.endmacro

; Quirk: PLB in emulation mode with S = $01FF. Y gets S after it; S is then put back.
.macro Q_PLB
        ldx #$FF
        txs
        plb
        tsx
        txy
        ldx #$F0
        txs
.endmacro

; Quirk: PEI in emulation mode; the pushed bytes land in X (low) and Y (high).
.macro Q_PEI
        pei ($FF)
        plx
        ply
.endmacro


; ---------------------------------------------------------------------------------------------
; Bank $00: reset, harness, interrupt handlers
; ---------------------------------------------------------------------------------------------

        ROM_HEADER "RPT CPUTEST"
        ROM_VECTORS trap, trap, just_rti, nmi_native, just_rti, trap, just_rti, nmi_emu, reset, trap

.segment "PTR0"
        ; The first jmp (abs) pointer sits at $00:F0FF, so its two bytes straddle a page.
        .res $FF

.segment "CODE"

reset:
        RESET_CPU HSTACK, HV
        CLEAR_MEMORY zero_byte, init_wait
        rep #$30
        .a16
        .i16
        jsr fill_pattern
        jsr setup_world
        lda #$ACE1
        sta v_rng
        lda #.loword(LOG1)
        sta v_logp
        lda #^LOG1
        sta v_logp+2
        lda #.loword(QLOG)
        sta v_qlogp
        lda #^QLOG
        sta v_qlogp+2
        jsr wait_frame
        ; The groups, bank by bank: the accumulator operations (banks $01 and $03), the rest of
        ; native mode (bank $02), emulation mode (bank $00).
        jsl tests_bank1
        jsl tests_bank3
        jsl tests_bank2
        jsr tests_emulation
        ; Every group has run: the NMI counts frames from now on.
        lda #$600D
        sta v_done
        lda v_frame
        sta v_done_frame
        stz v_busy
@idle:
        wai
        bra @idle

; Returns after the next NMI. .a16 .i16, D = HV.
wait_frame:
        .a16
        .i16
        stz v_busy
        lda v_frame
@wait:
        wai
        cmp v_frame
        beq @wait
        lda #1
        sta v_busy
        rts

; wait_frame for the start-up code, which runs with M=1.
init_wait:
        .a8
        rep #$20
        .a16
        jsr wait_frame
        sep #$20
        .a8
        rts

; Fills the tests' memory with the pattern from ROM (WRAM port, DMA channel 0), one frame at a
; time. .a16 .i16 on entry and exit.
fill_pattern:
        .a16
        sep #$20
        .a8
        ldx #$0000
        stx WMADDL
        stz WMADDH
        ldx #$1C00              ; $7E:0000-$1BFF
        jsr pattern_dma
        ldx #$2000
        stx WMADDL
        ldx #$2000              ; $7E:2000-$3FFF
        jsr pattern_dma
        jsr init_wait
        ldx #$2000              ; $7E:4000-$5FFF (the port's address goes on from $4000)
        jsr pattern_dma
        ldx #$2000              ; $7E:6000-$7FFF
        jsr pattern_dma
        jsr init_wait
        ldx #$FF00
        stx WMADDL
        ldx #$0200              ; $7E:FF00-$7F:00FF
        jsr pattern_dma
        rep #$20
        .a16
        rts

; One DMA of X bytes of the pattern to the WRAM port. .a8 .i16
pattern_dma:
        .a8
        stz DMAP                ; increment the A-bus address, one B-bus register
        lda #<WMDATA
        sta BBAD
        ldy #.loword(pattern)
        sty A1TL
        lda #^pattern
        sta A1B
        stx DASL
        lda #$01
        sta MDMAEN
        rts

; Writes the pointers the addressing worlds use (world_words). .a16 .i16
setup_world:
        .a16
        ldx #0
@next:
        lda world_words,x
        tay
        lda world_words+2,x
        sta a:$0000,y
        inx
        inx
        inx
        inx
        cpx #world_words_end - world_words
        bne @next
        rts

; The generator: 16-bit xorshift (7, 9, 8), period 65535. Returns the new state in A.
rng:
        .a16
        lda v_rng
        sta v_rt                ; x ^= x << 7: the low 9 bits move up by 7
        and #$01FF
        xba
        lsr a
        bcc @no_bit15
        ora #$8000
@no_bit15:
        eor v_rt
        sta v_rt                ; x ^= x >> 9
        xba
        and #$00FF
        lsr a
        eor v_rt
        sta v_rt                ; x ^= x << 8
        xba
        and #$FF00
        eor v_rt
        sta v_rng
        rts

; A value for a register or operand: one time in four from the `interesting` table, otherwise
; the generator's output. Clobbers X.
pick:
        .a16
        jsr rng
        bit #$0300
        bne @done
        lsr a
        lsr a
        lsr a
        and #$001E
        tax
        lda interesting,x
@done:
        rts

; Draws A, X, Y, the operand and P for this iteration.
gen_values:
        .a16
        lda v_flags
        and #F_TAB
        beq @random
        ; Table row v_fa + k/2, carry k & 1, decimal on.
        lda v_k
        lsr a
        clc
        adc v_fa
        asl a
        asl a
        tax
        lda dec_pairs,x
        sta v_gen_a
        lda dec_pairs+2,x
        sta v_gen_m
        jsr rng
        sta v_gen_x
        jsr rng
        sta v_gen_y
        jsr rng
        and #$00C6              ; N, V, I, Z
        sta v_gen_p
        lda v_k
        and #$0001
        ora #$0008
        ora v_gen_p
        sta v_gen_p
        rts
@random:
        jsr pick
        sta v_gen_a
        jsr pick
        sta v_gen_x
        jsr pick
        sta v_gen_y
        jsr rng
        sta v_tmp
        and #$00C7              ; N, V, I, Z, C
        sta v_gen_p
        lda v_tmp
        and #$0700
        bne @own
        lda v_gen_a             ; one time in eight the operand equals A
        bra @operand
@own:
        jsr pick
@operand:
        sta v_gen_m
        lda v_flags
        and #F_DEC
        beq @binary
        lda #$0008
        tsb v_gen_p
@binary:
        lda v_flags
        bit #F_FIXA
        beq @a
        ldx v_fa
        stx v_gen_a
@a:
        bit #F_FIXX
        beq @x
        ldx v_fx
        stx v_gen_x
@x:
        bit #F_FIXY
        beq @y
        ldx v_fy
        stx v_gen_y
@y:
        rts

; The calls a width routine makes. Each one returns to just after its call, with the stack as it
; found it and the widths it was called in.

; group_begin, with X = the address of the group's parameter record in bank $00 (P_SIZE bytes):
; copies it to v_par and sets up the first width. Canonical state in and out: native, .a16 .i16,
; D = HV, DBR = $00, S on the harness stack.
group_begin:
        .a16
        .i16
        ldy #0
@copy:
        lda a:$0000,x
        sta a:HV + v_par,y
        inx
        inx
        iny
        iny
        cpy #P_SIZE
        bne @copy
        lda v_seeds
        and #$00FF
        sta v_left
        stz v_k
        inc v_group
        rtl

; prep, first in each iteration (canonical state): keeps the width routine's S in v_hs, waits
; for the next frame when BUDGET iterations have run since the last wait, draws the values,
; writes the memory operand and four varying bytes above the test's S (what a pull reads), and
; returns the test's S in A.
prep:
        .a16
        .i16
        tsc
        clc
        adc #3                  ; S in the width routine, before the jsl
        sta v_hs
        lda v_budget
        cmp #BUDGET
        bcc @go
        jsr wait_frame
        stz v_budget
@go:
        inc v_budget
        jsr gen_values
        ldx v_s
        lda v_rng
        sta a:$0001,x
        eor v_gen_a
        xba
        sta a:$0003,x
        lda v_gen_m             ; the memory operand
        sta [v_ea]
        lda v_s
        rtl

; enter_n, called on the test's stack in native mode with .a16 .i16 and D = HV, DBR = $00:
; sets DBR, X, Y, D, A as the group and prep say, and the flags N, V, D, I, Z, C as drawn. The
; flags come from the PLP at the end, which pulls the byte of the PHP at the start with its M
; and X bits kept, so it returns in the widths it was called in.
enter_n:
        .a16
        .i16
        php
        sep #$20
        .a8
        lda 1,s
        and #$30
        ora v_gen_p
        sta 1,s
        lda v_dbr
        pha
        plb
        rep #$20
        .a16
        ldx v_gen_x
        ldy v_gen_y
        lda v_d
        tcd
        lda f:HV + v_gen_a
        plp
        rtl

; enter_e: the same, called in emulation mode (where X and Y keep 8 bits). It does its work in
; native mode and goes back to emulation mode before the PLP.
enter_e:
        .a8
        .i8
        php
        clc
        xce                     ; native; carry = 1 (E was 1)
        rep #$30
        .a16
        .i16
        sep #$20
        .a8
        lda 1,s
        and #$30
        ora v_gen_p
        sta 1,s
        lda v_dbr
        pha
        plb
        rep #$20
        .a16
        ldx v_gen_x
        ldy v_gen_y
        lda v_d
        tcd
        lda f:HV + v_gen_a
        sec
        xce                     ; emulation mode again: X and Y keep their low bytes
        .a8
        .i8
        plp
        rtl

; capture, called on the test's stack right after the tested code and the PHP, REP (CLC; XCE)
; that follow it: native, .a16 .i16, decimal off, the carry = the test's E, P at 4,s. Stores
; the registers in v_rec, sets D = HV and DBR = $00, and returns the harness's S (v_hs) in A.
capture:
        .a16
        .i16
        sta f:HV + v_rec + R_A
        tdc
        sta f:HV + v_rec + R_D
        lda #0
        rol a
        sta f:HV + v_rec + R_E  ; E, and 0 in the group byte for now
        txa
        sta f:HV + v_rec + R_X
        tya
        sta f:HV + v_rec + R_Y
        tsc
        clc
        adc #4                  ; S before this call and the PHP
        sta f:HV + v_rec + R_S
        sep #$20
        .a8
        lda 4,s
        sta f:HV + v_rec + R_P
        phb
        pla
        sta f:HV + v_rec + R_DBR
        lda #0
        pha                     ; (the byte DBR was in is 0 again)
        plb
        rep #$20
        .a16
        lda #HV
        tcd
        lda v_hs
        rtl

; finish, back on the harness stack (canonical state): logs the record and returns with Z=0
; while the width has iterations left (Z=1: done, and the next width set up).
finish:
        .a16
        .i16
        lda [v_ea]
        sta v_rec + R_M
        sep #$20
        .a8
        lda v_group
        sta v_rec + R_G
        rep #$20
        .a16
        jsr write_record
        inc v_k
        dec v_left
        bne @more
        lda v_seeds
        and #$00FF
        sta v_left
        stz v_k
        lda #0                  ; Z=1: this width is done
@more:
        rtl

; Appends v_rec to the log (or the quirk log). The log's first part ends at $7F:FFFF and the
; second at $7E:F7FF; after that records are dropped and v_full is set.
write_record:
        .a16
        .i16
        lda v_flags
        and #F_QUIRK
        bne @quirk
        lda v_full
        bne @done
        ldy #14
@copy:
        lda a:HV + v_rec,y
        sta [v_logp],y
        dey
        dey
        bpl @copy
        lda v_logp
        clc
        adc #16
        sta v_logp
        bne @check_end
        sep #$20                ; past $7F:FFFF: on to the second part
        .a8
        lda #^LOG2
        sta v_logp+2
        rep #$20
        .a16
        lda #.loword(LOG2)
        sta v_logp
        rts
@check_end:
        cmp #LOG2_END
        bne @done
        sep #$20
        .a8
        lda v_logp+2
        cmp #^LOG2
        rep #$20
        .a16
        bne @done
        inc v_full
@done:
        rts
@quirk:
        lda v_qlogp
        cmp #QLOG_END
        beq @done
        ldy #14
@qcopy:
        lda a:HV + v_rec,y
        sta [v_qlogp],y
        dey
        dey
        bpl @qcopy
        lda v_qlogp
        clc
        adc #16
        sta v_qlogp
        ; Nothing of a quirk's result may stay outside the quirk log: clear the record and the
        ; P that the PHP after the tested code left on the test's stack (at the logged S).
        ldx v_rec + R_S
        sep #$20
        .a8
        lda #0
        sta a:$0000,x
        rep #$20
        .a16
        ldy #14
@scrub:
        lda #0
        sta a:HV + v_rec,y
        dey
        dey
        bpl @scrub
        rts

; The NMI in native mode (the harness waits in native mode): counts the frame, and an overrun if
; the tests were running.
nmi_native:
        rep #$20
        .a16
        pha
        lda f:HV + v_frame
        inc a
        sta f:HV + v_frame
        lda f:HV + v_busy
        beq @ok
        lda f:HV + v_overrun
        inc a
        sta f:HV + v_overrun
@ok:
        pla
        rti

; An NMI in emulation mode can only come in the middle of a test: an overrun.
nmi_emu:
        .a8
        pha
        lda #$EE
        sta f:HV + v_overrun
        pla
        rti

; BRK and COP, native and emulation: A gets the pushed P (and, with M=0, the low byte of the
; return address), X the handler's S, and RTI goes back after the signature byte.
trap:
        lda 1,s
        tsx
        rti

just_rti:
        rti

; For J_JSL_FAR: a subroutine in bank $00 called from the other banks.
far_xba:
        xba
        rtl
; ---------------------------------------------------------------------------------------------
; Emulation-mode tests (bank $00: in emulation mode an interrupt's RTI returns to bank $00)
; ---------------------------------------------------------------------------------------------

        .a16
        .i16
EMU_FIRST = G_NEXT
        ; Quirks first (while $0100-$0101 still hold what setup_world put there): cases where
        ; bsnes v094 is known to differ from the hardware. They only read memory, log into the
        ; quirk log ($7E:F800-$FEFF) alone, and write_record scrubs what else they leave, so no
        ; other byte of WRAM depends on how they come out.
        E0 $7E4000
        FLAG F_QUIRK
        RUN {lda [$FF]}         ; [dp] pointer across the page end, E=1
        E0 $7E4000
        FLAG F_QUIRK
        FIXY $0030
        RUN {lda [$FF],y}       ; [dp],Y likewise
        E0 $7E4000
        FLAG F_QUIRK
        FIXX $0030
        RUN {lda ($F0,x)}       ; (dp,X) whose index wraps within the page, E=1
        E0 $7E4000
        FLAG F_QUIRK
        T_D .set $02C0
        FIXX $0030
        RUN {lda ($20,x)}       ; (dp,X) with DL != 0, E=1
        E0 $7E4000
        FLAG F_QUIRK
        RUN Q_PEI               ; PEI in emulation mode
        E0 $7E4000
        FLAG F_QUIRK
        RUN Q_PLB               ; PLB in emulation mode with S = $01FF

        ; Accumulator operations: immediate, then every memory mode for LDA and STA, a few for
        ; the others.
        .repeat 2, i
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {lda #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {adc #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {sbc #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {cmp #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {and #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {ora #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {eor #IMM_M}
            E0 $7E4000
            IMM $0080 + i * $7F
            RUN {bit #IMM_M}
        .endrepeat
        E_MEM lda
        E_MEM sta
        E_DPAGES lda
        E_DPAGES sta
        E_DPAGES adc
        .repeat 1
            E0 $000010
            RUN {adc $10}
            E0 $000050
            FIXX $0060
            RUN {sbc $F0,x}
            E0 $7E4200
            RUN {cmp ($20)}
            E0 $7E46B0
            FIXY $0030
            RUN {eor ($FF),y}
            E0 $0001F3
            RUN {and $03,s}
            E0 $7F0040
            RUN {ora f:$7F0040}
        .endrepeat
        ; Read-modify-write and the other memory instructions.
        E0 $7E4000
        RUN {asl a}
        E0 $7E4000
        RUN {ror a}
        E0 $7E4000
        RUN {inc a}
        E0 $000010
        RUN {rol $10}
        E0 $000050
        FIXX $0060
        RUN {lsr $F0,x}
        E0 $000050
        FIXX $0060
        RUN {inc $F0,x}
        E0 $7E4000
        RUN {dec a:$4000}
        E0 $7E4120
        FIXX $0030
        RUN {asl $40F0,x}
        E0 $000010
        RUN {tsb $10}
        E0 $7E4000
        RUN {trb a:$4000}
        E0 $000050
        FIXX $0060
        RUN {stz $F0,x}
        E0 $000050
        FIXX $0060
        RUN {bit $F0,x}
        E0 $000050
        FIXY $0060
        RUN {ldx $F0,y}
        E0 $000050
        FIXY $0060
        RUN {stx $F0,y}
        E0 $000050
        FIXX $0060
        RUN {ldy $F0,x}
        E0 $000050
        FIXX $0060
        RUN {sty $F0,x}
        E0 $7E4000
        IMM $00C5
        RUN {cpx #IMM_X}
        E0 $000010
        RUN {cpy $10}
        ; Transfers, flags and the like.
        E0 $7E4000
        RUN {tax}
        E0 $7E4000
        RUN {tya}
        E0 $7E4000
        RUN {txy}
        E0 $7E4000
        RUN {tsx}
        E0 $7E4000
        FIXX $0060
        RUN {txs}
        E0 $7E4000
        FIXA $1870
        RUN {tcs}
        E0 $7E4000
        RUN {tsc}
        E0 $7E4000
        RUN {tcd}
        E0 $7E4000
        RUN {tdc}
        E0 $7E4000
        RUN {xba}
        E0 $7E4000
        RUN {inx}
        E0 $7E4000
        RUN {dey}
        E0 $7E4000
        ENDS_NATIVE
        RUN XCE_CLC             ; back to native mode
        E0 $7E4000
        RUN XCE_SEC             ; stays in emulation mode
        E0 $7E4000
        IMM $FF
        RUN {rep #IMM_M}
        E0 $7E4000
        IMM $FF
        RUN {sep #IMM_M}
        E0 $7E4000
        RUN {clv}
        E0 $7E4000
        RUN {sed}
        E0 $7E4000
        RUN {wdm $EA}
        ; Stack.
        E0 $0001EF
        RUN {pha}
        E0 $0001EF
        RUN {phx}
        E0 $0001EF
        RUN {php}
        E0 $0001EF
        RUN {phb}
        E0 $0001EF
        RUN {phd}
        E0 $0001EF
        RUN {phk}
        E0 $0001EF
        RUN {pea $A55A}
        E0 $0001EF
        RUN {per *}
        E0 $0001F1
        RUN {pla}
        E0 $0001F1
        RUN {ply}
        E0 $0001F1
        RUN {PLP_TO $30}
        E0 $0001F1
        RUN {plb}
        E0 $0001F1
        RUN {pld}
        E0 $000100
        RUN {E_PUSH_WRAP pha}
        E0 $000100
        RUN {E_PUSH_WRAP php}
        E0 $000100
        RUN {E_PUSH_WRAP phy}
        E0 $000100
        RUN {E_PULL_WRAP pla}
        E0 $000100
        RUN {E_PULL_WRAP ply}
        E0 $000100
        RUN E_PULL_PLP
        ; Control flow.
        E0 $7E4000
        SEEDS 6
        RUN {B_FWD bcc}
        E0 $7E4000
        SEEDS 6
        RUN {B_BACK bne}
        E0 $7E4000
        RUN {J_ABS}
        E0 $7E4000
        RUN {J_IND}
        E0 $7E4000
        RUN {J_INDL}
        E0 $7E4000
        FIXX $0002
        RUN {J_INDX}
        E0 $0001EF
        RUN {J_JSR}
        E0 $0001EE
        RUN {J_JSL}
        E0 $0001EF
        FIXX $0002
        RUN {J_JSR_INDX}
        E0 $7E4000
        RUN {R_RTS}
        E0 $7E4000
        RUN {R_RTL}
        E0 $7E4000
        RUN {R_RTI_E}
        E0 $0001EE
        RUN {brk $5A}
        E0 $0001EE
        RUN {cop $A5}
        ; Block moves with 8-bit index registers.
        E0 $7F0090
        FIXA $0007
        FIXX $0080
        FIXY $0090
        RUN {mvn #$7E, #$7F}
        E0 $7F0090
        FIXA $0007
        FIXX $00FC
        FIXY $0090
        RUN {mvp #$7E, #$7F}
        ; Decimal mode, 8-bit.
        DEC_TABLE_E adc
        DEC_TABLE_E sbc

EMU_END = G_NEXT
        DRIVER tests_emulation, EMU_FIRST, EMU_END, rts

; ---------------------------------------------------------------------------------------------
; Tables
; ---------------------------------------------------------------------------------------------

.segment "RODATA"

zero_byte:
        .byte 0

; Values the generator picks one time in four: zero, signs, carries and BCD-looking numbers.
interesting:
        .word $0000, $0001, $007F, $0080, $00FF, $0100, $7FFF, $8000
        .word $FFFF, $FF80, $8080, $7F7F, $0099, $9999, $4000, $C000

; (A, operand) pairs for decimal ADC and SBC: valid BCD, digits A-F, carries out of every digit.
dec_pairs:
        .word $0000, $0000
        .word $0009, $0001
        .word $0099, $0001
        .word $0050, $0050
        .word $0079, $0001
        .word $0080, $0080
        .word $000A, $0005
        .word $000F, $000F
        .word $00FF, $00FF
        .word $009A, $0066
        .word $00AB, $00CD
        .word $0045, $0055
        .word $1234, $5678
        .word $9999, $0001
        .word $4999, $5000
        .word $8000, $8000
        .word $7999, $0001
        .word $0F0F, $F0F0
        .word $FFFF, $FFFF
        .word $ABCD, $1234
        .word $0101, $9999
        .word $5555, $AAAA
        .word $0190, $0010
        .word $99F9, $0007

; Pointers and other words the worlds need: address in bank $00, value.
world_words:
        ; N0 and E0, page 0
        .word $0020, $4200      ; ($20)
        .word $0022, $42F0      ; ($22),Y
        .word $0024, $0060      ; [$24] = $7F:0060
        .word $0026, $007F
        .word $0028, $FFF0      ; [$28],Y = $7E:FFF0
        .word $002A, $007E
        .word $002C, $FFF0      ; ($2C),Y across the bank
        .word $0040, $4400      ; ($10,X) with X = $30
        .word $00FE, $8000      ; E0 ($FF): low byte at $00FF ...
        .word $0000, $7E46      ; ... high byte at $0000 (and a bank byte for [$FF] at $0001)
        .word $0100, $7E47      ; [$FF] without wrapping reads $0100 and $0101
        ; N1 (D = $12F8)
        .word $1318, $0A00      ; ($20)
        .word $131A, $0AF0      ; ($22),Y
        .word $131C, $0070      ; [$24] = $7F:0070
        .word $131E, $007F
        .word $1320, $46F0      ; [$28],Y = $7E:46F0
        .word $1322, $007E
        .word $1330, $0C00      ; ($08,X) with X = $30
        ; (sr,S),Y pointers, 5 above each world's S
        .word $1BF5, $44F0      ; N0
        .word $1AF5, $0DF0      ; N1
        .word $01F5, $44F0      ; E0
        ; Emulation mode with D = $0100 and D = $02C0
        .word $01A0, $4800      ; ($A0) with D = $0100
        .word $02FF, $4840      ; ($3F) with D = $02C0: $02FF and $0300
        .word $0310, $4900      ; quirk ($20,X) with D = $02C0, X = $30
world_words_end:

; ---------------------------------------------------------------------------------------------
; Bank $01: accumulator operations in native mode
; ---------------------------------------------------------------------------------------------

.segment "BANK1"
        .a16
        .i16
BANK1_FIRST = G_NEXT
        ALU_IMM ora
        ALU_MEM ora
        ALU_IMM and
        ALU_MEM and
        ALU_IMM eor
        ALU_MEM eor
        ALU_IMM adc
        ALU_MEM adc
        ALU_MEM sta
        ALU_IMM lda
        ALU_MEM lda
        ALU_IMM cmp
        ALU_MEM cmp
        ALU_IMM sbc
        ALU_MEM sbc
BANK1_END = G_NEXT
        DRIVER tests_bank1, BANK1_FIRST, BANK1_END, rtl

; ---------------------------------------------------------------------------------------------
; Bank $03: accumulator operations in native mode, continued (and the pattern)
; ---------------------------------------------------------------------------------------------

.segment "BANK3"
        .a16
        .i16
BANK3_FIRST = G_NEXT
        ALU_N1 lda
        ALU_N1 sta
        ALU_N1 adc
        ALU_N1 cmp
        ALU_CROSS lda
        ALU_CROSS sta
        ALU_CROSS sbc
        ; Direct page at $FFF0: dp $0F reads $00:FFFF (ROM) and $00:0000, wrapping in bank $00.
        CFG $7E4000, $FFF0, $7E, $1BF0
        RUN {lda $0F}
        CFG $7E4000, $FFF0, $7E, $1BF0
        RUN {adc $0F}
        CFG $7E4000, $FFF0, $7E, $1BF0
        FIXX $0030
        RUN {lda $20,x}
        ; Decimal mode with drawn values (invalid digits included) and its table.
        N0 $7E4000
        FLAG F_DEC
        RUN {adc a:$4000}
        N0 $7E4000
        FLAG F_DEC
        RUN {sbc a:$4000}
        N0 $7E4000
        FLAG F_DEC
        IMM $0999
        RUN {adc #IMM_M}
        N0 $7E4000
        FLAG F_DEC
        IMM $0999
        RUN {sbc #IMM_M}
        N0 $7E4000
        FLAG F_DEC
        RUN {cmp a:$4000}       ; decimal mode leaves CMP binary
        N0 $7E4000
        FLAG F_DEC
        RUN {inc a}             ; and INC
        DEC_TABLE adc
        DEC_TABLE sbc
BANK3_END = G_NEXT
        DRIVER tests_bank3, BANK3_FIRST, BANK3_END, rtl

; ---------------------------------------------------------------------------------------------
; Bank $02: everything else in native mode
; ---------------------------------------------------------------------------------------------

.segment "BANK2"
        .a16
        .i16
BANK2_FIRST = G_NEXT
        RMW_ALL asl
        RMW_ALL lsr
        RMW_ALL rol
        RMW_ALL ror
        RMW_ALL inc
        RMW_ALL dec
        N0 $000010
        RUN {tsb $10}
        N0 $7E4000
        RUN {tsb a:$4000}
        N0 $000010
        RUN {trb $10}
        N0 $7E4000
        RUN {trb a:$4000}
        N0 $7E4000
        IMM $8001
        RUN {bit #IMM_M}
        N0 $7E4000
        IMM $4000
        RUN {bit #IMM_M}
        N0 $000010
        RUN {bit $10}
        N0 $000120
        FIXX $0030
        RUN {bit $F0,x}
        N0 $7E4000
        RUN {bit a:$4000}
        N0 $7E4120
        FIXX $0030
        RUN {bit $40F0,x}
        N0 $000010
        RUN {stz $10}
        N0 $000120
        FIXX $0030
        RUN {stz $F0,x}
        N0 $7E4000
        RUN {stz a:$4000}
        N0 $7E4120
        FIXX $0030
        RUN {stz $40F0,x}

        ; Index registers.
        N0 $7E4000
        IMM $0000
        RUN {ldx #IMM_X}
        N0 $7E4000
        IMM $80FF
        RUN {ldx #IMM_X}
        N0 $000010
        RUN {ldx $10}
        N0 $000120
        FIXY $0030
        RUN {ldx $F0,y}
        N0 $7E4000
        RUN {ldx a:$4000}
        N0 $7E4120
        FIXY $0030
        RUN {ldx $40F0,y}
        N0 $7E4000
        IMM $0000
        RUN {ldy #IMM_X}
        N0 $7E4000
        IMM $80FF
        RUN {ldy #IMM_X}
        N0 $000010
        RUN {ldy $10}
        N0 $000120
        FIXX $0030
        RUN {ldy $F0,x}
        N0 $7E4000
        RUN {ldy a:$4000}
        N0 $7E4120
        FIXX $0030
        RUN {ldy $40F0,x}
        N0 $000010
        RUN {stx $10}
        N0 $000120
        FIXY $0030
        RUN {stx $F0,y}
        N0 $7E4000
        RUN {stx a:$4000}
        N0 $000010
        RUN {sty $10}
        N0 $000120
        FIXX $0030
        RUN {sty $F0,x}
        N0 $7E4000
        RUN {sty a:$4000}
        N0 $7E4000
        IMM $8000
        RUN {cpx #IMM_X}
        N0 $000010
        RUN {cpx $10}
        N0 $7E4000
        RUN {cpx a:$4000}
        N0 $7E4000
        IMM $0001
        RUN {cpy #IMM_X}
        N0 $000010
        RUN {cpy $10}
        N0 $7E4000
        RUN {cpy a:$4000}

        ; Transfers, increments, flags, no-ops.
        IMPLIED inx
        IMPLIED iny
        IMPLIED dex
        IMPLIED dey
        IMPLIED tax
        IMPLIED tay
        IMPLIED txa
        IMPLIED tya
        IMPLIED tsx
        IMPLIED txy
        IMPLIED tyx
        IMPLIED tcd
        IMPLIED tdc
        IMPLIED tsc
        IMPLIED xba
        IMPLIED nop
        IMPLIED clc
        IMPLIED sec
        IMPLIED cli
        IMPLIED sei
        IMPLIED clv
        IMPLIED cld
        IMPLIED sed
        N0 $7E4000
        FIXX $1960              ; S = $1960, or $0060 with 8-bit X
        RUN {txs}
        N0 $7E4000
        FIXA $1860
        RUN {tcs}
        N0 $7E4000
        RUN {wdm $5A}
        N0 $7E4000
        SEEDS 2
        ENDS_EMU
        RUN XCE_SEC             ; into emulation mode (S becomes $01F0)
        N0 $7E4000
        SEEDS 2
        RUN XCE_CLC             ; native stays native
        .repeat 3, i
            N0 $7E4000
            IMM ($30CFFF >> (i * 8)) & $FF
            RUN {rep #<IMM_M}
        .endrepeat
        .repeat 3, i
            N0 $7E4000
            IMM ($30C308 >> (i * 8)) & $FF
            RUN {sep #<IMM_M}
        .endrepeat

        ; Stack. Pushes show in the operand (the word at S-1 before the push), pulls read the
        ; random bytes above S.
        N0 $001BEF
        RUN {pha}
        N0 $001BEF
        RUN {phx}
        N0 $001BEF
        RUN {phy}
        N0 $001BEF
        RUN {php}
        N0 $001BEF
        RUN {phb}
        N0 $001BEF
        RUN {phd}
        N0 $001BEF
        RUN {phk}
        N0 $001BEF
        RUN {pea $8421}
        N0 $001BEF
        RUN {per *+$1234}
        N0 $000030
        RUN {pei ($30)}
        N0 $000030
        RUN S_PEI_PLD
        N1 $001328
        RUN {pei ($30)}         ; D = $12F8: the word at $1328
        N0 $001BF1
        RUN {pla}
        N0 $001BF1
        RUN {plx}
        N0 $001BF1
        RUN {ply}
        .repeat 4, i
            N0 $001BF1
            SEEDS 2
            RUN {PLP_TO (i * $10)}  ; to each of the four widths from each
        .endrepeat
        N0 $001BF1
        RUN {plb}
        N0 $001BF1
        RUN {pld}

        ; Control flow.
        N0 $7E4000
        RUN {B_FWD bra}
        N0 $7E4000
        RUN BRL_FWD
        N0 $7E4000
        RUN BRL_BACK
        .repeat 1
            N0 $7E4000
            RUN {B_FWD bpl}
            N0 $7E4000
            RUN {B_FWD bmi}
            N0 $7E4000
            RUN {B_FWD bvc}
            N0 $7E4000
            RUN {B_FWD bvs}
            N0 $7E4000
            RUN {B_FWD bcc}
            N0 $7E4000
            RUN {B_FWD bcs}
            N0 $7E4000
            RUN {B_FWD bne}
            N0 $7E4000
            RUN {B_FWD beq}
            N0 $7E4000
            RUN {B_BACK bpl}
            N0 $7E4000
            RUN {B_BACK bmi}
            N0 $7E4000
            RUN {B_BACK bvc}
            N0 $7E4000
            RUN {B_BACK bvs}
            N0 $7E4000
            RUN {B_BACK bcc}
            N0 $7E4000
            RUN {B_BACK bcs}
            N0 $7E4000
            RUN {B_BACK bne}
            N0 $7E4000
            RUN {B_BACK beq}
            N0 $7E4000
            RUN {B_BACK bra}
        .endrepeat
        N0 $7E4000
        RUN J_ABS
        N0 $7E4000
        RUN J_LONG
        N0 $7E4000
        RUN J_IND
        N0 $7E4000
        RUN J_INDL
        N0 $7E4000
        FIXX $0002
        RUN J_INDX
        N0 $001BEF
        RUN J_JSR
        N0 $001BEF
        FIXX $0002
        RUN J_JSR_INDX
        N0 $001BEE
        RUN J_JSL
        N0 $001BEE
        RUN J_JSL_FAR
        N0 $7E4000
        RUN R_RTS
        N0 $7E4000
        RUN R_RTL
        N0 $7E4000
        RUN R_RTI
        N0 $001BED
        RUN {brk $5A}
        N0 $001BED
        RUN {cop $A5}

        ; Block moves: $7E:0080-$0087 to $7F:0090-$0097 (and backwards for MVP), one with an
        ; 8-bit index wrapping, one overlapping within bank $7F.
        N0 $7F0090
        FIXA $0007
        FIXX $0080
        FIXY $0090
        RUN {mvn #$7E, #$7F}
        N0 $7F0090
        FIXA $0007
        FIXX $0087
        FIXY $0097
        RUN {mvp #$7E, #$7F}
        N0 $7F0090
        FIXA $0007
        FIXX $00FC
        FIXY $0090
        RUN {mvn #$7E, #$7F}
        N0 $7F0084
        FIXA $000F
        FIXX $0080
        FIXY $0084
        RUN {mvn #$7F, #$7F}

BANK2_END = G_NEXT
        DRIVER tests_bank2, BANK2_FIRST, BANK2_END, rtl

; ---------------------------------------------------------------------------------------------
; Bank $03, after its groups: the pattern the tests' memory starts with
; ---------------------------------------------------------------------------------------------

.segment "BANK3"
; 8 KiB from the same xorshift as `rng`, computed by the assembler.
pattern:
        .scope
        seed .set $1D2B
        .repeat 8192
            seed .set seed ^ ((seed << 7) & $FFFF)
            seed .set seed ^ (seed >> 9)
            seed .set seed ^ ((seed << 8) & $FFFF)
            .byte seed & $FF
        .endrepeat
        .endscope
