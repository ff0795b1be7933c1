; The calibration ROM of the bsnes oracle: it measures where bsnes v094's retro_run stops in
; the frame, what the machine holds at power-on, and where OAM and CGRAM lie in the core's
; serialized state. framework/testkit/src/bsnes.rs writes down what it found, and
; framework/testkit/tests/bsnes.rs checks it.
;
; At reset it latches the PPU's H/V counters, samples two unmapped addresses, writes known
; bytes to VRAM, all of OAM and all of CGRAM, then turns on NMI, an H/V IRQ at line 224 dot 300
; and the auto-joypad read. The main loop latches the counters again and again, and copies the
; joypad once the auto-read is idle; the NMI handler counts NMIs, latches the counters on entry
; and turns NMI off at the third one, so later frames show where retro_run stops without NMI;
; the IRQ handler counts IRQs. All of it lands in the first 32 bytes of WRAM (below); the rest
; of WRAM, except the stack just below $2000, is never written, so it still holds what the core
; put there at power-on.

.p816

; Where the results go: WRAM $7E:0000, reached through the direct page (D = 0).
NMI_COUNT = $00 ; word: NMIs taken so far
IRQ_COUNT = $02 ; word: H/V IRQs (line 224, dot 300) taken so far
LAST_VH   = $04 ; word: the main loop's latest latch as (V & $7F) << 9 | H, in one store
LOOPS     = $06 ; word: main loop iterations, wrapping
JOY       = $08 ; word: $4218/$4219 as the main loop last saw them with the auto-read idle
RESET_V   = $0A ; word: V counter latched first thing at reset
RESET_H   = $0C ; word: H counter of that latch
NMI_V     = $0E ; word: V counter latched on entry to the latest NMI
NMI_H     = $10 ; word: H counter of that latch
BUSY_VH   = $12 ; word: the latest LAST_VH the main loop stored with the auto-read busy
OPEN_2000 = $14 ; byte: what `lda $2000` (nothing mapped there) read
OPEN_4000 = $15 ; byte: what `lda $4000` (nothing mapped there) read
OPVCT_HI  = $16 ; byte: the second read of $213D at reset, unmasked (bits 7-1 are PPU2 open bus)
LATCH_V   = $18 ; word: scratch for the main loop's latch
LATCH_H   = $1A ; word: scratch for the main loop's latch
DONE      = $1C ; word: $C0DE once VRAM, OAM and CGRAM are written

; The NMI that turns NMI off: from this one on, only the IRQ and the auto-joypad read stay on.
NMI_OFF_AT = 3
IRQ_LINE   = 224
IRQ_DOT    = 300

; Latches the H and V counters through $2137 and stores each as a 9-bit word (8-bit A).
.macro latch_counters v_word, h_word
        lda $213F           ; reset the low/high flip-flops of $213C/$213D
        lda $2137           ; latch H and V ($4201 bit 7 is set at power-on)
        lda $213D
        sta v_word
        lda $213D
        and #$01
        sta v_word+1
        lda $213C
        sta h_word
        lda $213C
        and #$01
        sta h_word+1
.endmacro

.segment "CODE"

reset:
        sei
        clc
        xce                 ; native mode
        cld
        sep #$20
        .a8
        rep #$10
        .i16
        ldx #$1FFF
        txs
        latch_counters RESET_V, RESET_H

        lda $213F
        lda $2137
        lda $213D
        lda $213D
        sta OPVCT_HI
        lda $2000
        sta OPEN_2000
        lda $4000
        sta OPEN_4000

        rep #$20
        .a16
        stz NMI_COUNT
        stz IRQ_COUNT
        stz LAST_VH
        stz LOOPS
        stz JOY
        stz NMI_V
        stz NMI_H
        stz BUSY_VH
        stz DONE
        sep #$20
        .a8

        lda #$80
        sta $2100           ; forced blank, so VRAM, OAM and CGRAM take writes
        sta $2115           ; VRAM address steps one word after each write to $2119
        ldx #$1234
        stx $2116           ; VRAM word address $1234, that is byte $2468
        ldx #0
@vram:
        rep #$20
        .a16
        lda vram_words,x
        sta $2118           ; low byte to $2118, high byte to $2119
        sep #$20
        .a8
        inx
        inx
        cpx #16
        bne @vram

        ldx #0
        stx $2102           ; OAM address 0
        lda #3
        ldx #544
@oam:
        sta $2104           ; OAM byte i = 3 + 7 * i (mod 256), all 544 of them
        clc
        adc #7
        dex
        bne @oam

        stz $2121           ; CGRAM address 0
        lda #5
        ldx #512
@cgram:
        sta $2122           ; CGRAM byte i = 5 + 13 * i (mod 256), all 512 of them
        clc
        adc #13
        dex
        bne @cgram

        rep #$20
        .a16
        lda #$C0DE
        sta DONE
        sep #$20
        .a8
        ldx #IRQ_DOT
        stx $4207           ; H-IRQ dot
        ldx #IRQ_LINE
        stx $4209           ; V-IRQ line
        lda #$B1
        sta $4200           ; NMI on, H and V IRQ on, auto-joypad read on
        cli

main:
        latch_counters LATCH_V, LATCH_H
        rep #$20
        .a16
        lda LATCH_V
        and #$007F
        xba
        asl
        ora LATCH_H
        sta LAST_VH         ; one store: a frame boundary never splits it
        sep #$20
        .a8
        lda $4212
        lsr                 ; bit 0: the auto-joypad read is in progress
        bcc @idle
        ldx LAST_VH
        stx BUSY_VH
        bra @count
@idle:
        ldx $4218
        stx JOY
@count:
        ldx LOOPS
        inx
        stx LOOPS
        bra main

nmi:
        rep #$30
        .a16
        .i16
        pha
        phx
        phy
        sep #$20
        .a8
        lda $4210           ; acknowledge the NMI
        latch_counters NMI_V, NMI_H
        rep #$20
        .a16
        inc NMI_COUNT
        lda NMI_COUNT
        cmp #NMI_OFF_AT
        bne @done
        sep #$20
        .a8
        lda #$31
        sta $4200           ; NMI off; H and V IRQ and the auto-joypad read stay on
@done:
        rep #$30
        .a16
        .i16
        ply
        plx
        pla
        rti

irq:
        rep #$20
        .a16
        pha
        inc IRQ_COUNT
        sep #$20
        .a8
        lda $4211           ; acknowledge the IRQ
        rep #$20
        .a16
        pla
        rti

; Any other interrupt is a failure: stay here, so the counters stop moving.
stop:
        bra stop

vram_words:
        .word $0123, $4567, $89AB, $CDEF, $FEDC, $BA98, $7654, $3210

.segment "HEADER"
        .byte "RPT BSNES CALIBRATION" ; title, 21 bytes
        .byte $20           ; LoROM, slow ROM
        .byte $00           ; ROM only
        .byte $05           ; 32 KiB
        .byte $00           ; no cartridge RAM
        .byte $01           ; North America: NTSC
        .byte $00           ; developer
        .byte $00           ; version
        .word $FFFF         ; checksum complement, set by build.sh
        .word $0000         ; checksum, set by build.sh

.segment "VECTORS"
        .word 0, 0          ; $FFE0
        .word stop          ; $FFE4 native COP
        .word stop          ; $FFE6 native BRK
        .word stop          ; $FFE8 native ABORT
        .word nmi           ; $FFEA native NMI
        .word 0             ; $FFEC
        .word irq           ; $FFEE native IRQ
        .word 0, 0          ; $FFF0
        .word stop          ; $FFF4 emulation COP
        .word 0             ; $FFF6
        .word stop          ; $FFF8 emulation ABORT
        .word stop          ; $FFFA emulation NMI
        .word reset         ; $FFFC emulation RESET
        .word stop          ; $FFFE emulation IRQ/BRK
