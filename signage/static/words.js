// Every word the signage page shows, per language (docs/display.md, `display: language:`).
// Bundled fonts carry these words' glyphs only: after a change run `python -m signage.fonts`.
"use strict";

const WORDS = {
  en: {round: "Round", betting: "PLACE YOUR BETS", dealing: "NO MORE BETS", idle: "RESULT",
       player: "PLAYER", banker: "BANKER", tie: "TIE", dealer: "DEALER", seat: "Seat", dp: "Designated Player",
       wins: "WINS", natural: "NATURAL", pair: "PAIR", min: "Min", max: "Max", bead_plate: "Bead plate",
       big_road: "Big road", big_eye_boy: "Big eye boy", small_road: "Small road", cockroach_pig: "Cockroach pig",
       tilt: "TABLE HALTED", stale: "NO LIVE FEED — waiting for the table", offline: "Offline",
       win: "WIN", lose: "LOSE", push: "PUSH", voided: "ROUND VOIDED", last: "Last results", rounds: "Rounds",
       pairs: "Pairs", shoe: "This shoe", war: "War", banker_ask: "BANKER ASK", player_ask: "PLAYER ASK",
       naturals: "Naturals", game: "Game", pays: "Pays", commission: "commission", earlier: "Earlier shoes", shoe_no: "Shoe"},
  fr: {round: "Donne", betting: "FAITES VOS JEUX", dealing: "RIEN NE VA PLUS", idle: "RÉSULTAT",
       player: "JOUEUR", banker: "BANQUIER", tie: "ÉGALITÉ", dealer: "CROUPIER", seat: "Place",
       dp: "Joueur désigné", wins: "GAGNE", natural: "NATUREL", pair: "PAIRE", min: "Min", max: "Max",
       bead_plate: "Tableau perles", big_road: "Grande route", big_eye_boy: "Big eye boy",
       small_road: "Petite route", cockroach_pig: "Cockroach pig", tilt: "TABLE ARRÊTÉE",
       stale: "PAS DE FLUX — en attente de la table", offline: "Hors ligne", win: "GAGNÉ", lose: "PERDU",
       push: "ÉGALITÉ", voided: "DONNE ANNULÉE", last: "Derniers résultats", rounds: "Donnes", pairs: "Paires",
       shoe: "Ce sabot", war: "Guerre", banker_ask: "SI BANQUIER", player_ask: "SI JOUEUR",
       naturals: "Naturels", game: "Coup", pays: "Paie", commission: "commission", earlier: "Sabots précédents", shoe_no: "Sabot"},
  es: {round: "Mano", betting: "HAGAN SUS APUESTAS", dealing: "NO VA MÁS", idle: "RESULTADO",
       player: "JUGADOR", banker: "BANCA", tie: "EMPATE", dealer: "CRUPIER", seat: "Puesto",
       dp: "Jugador designado", wins: "GANA", natural: "NATURAL", pair: "PAREJA", min: "Mín", max: "Máx",
       bead_plate: "Tablero", big_road: "Camino grande", big_eye_boy: "Big eye boy", small_road: "Camino pequeño",
       cockroach_pig: "Cockroach pig", tilt: "MESA DETENIDA",
       stale: "SIN SEÑAL — esperando la mesa", offline: "Desconectado", win: "GANA", lose: "PIERDE",
       push: "EMPATE", voided: "MANO ANULADA", last: "Últimos resultados", rounds: "Manos", pairs: "Parejas",
       shoe: "Este zapato", war: "Guerra", banker_ask: "SI BANCA", player_ask: "SI JUGADOR",
       naturals: "Naturales", game: "Juego", pays: "Paga", commission: "comisión", earlier: "Zapatos anteriores", shoe_no: "Zapato"},
  "zh-Hans": {"round": "局", "betting": "请下注", "dealing": "停止下注", "idle": "结果", "player": "闲", "banker": "庄", "tie": "和", "dealer": "荷官", "seat": "座位", "dp": "指定玩家", "wins": "赢", "natural": "例牌", "pair": "对子", "min": "最低", "max": "最高", "bead_plate": "珠盘路", "big_road": "大路", "big_eye_boy": "大眼仔", "small_road": "小路", "cockroach_pig": "蟑螂路", "tilt": "牌桌暂停", "stale": "无实时数据 — 等待牌桌", "offline": "离线", "win": "赢", "lose": "输", "push": "平", "voided": "本局作废", "last": "最近结果", "rounds": "局数", "pairs": "对子", "shoe": "本靴", "war": "战争", "banker_ask": "庄问路", "player_ask": "闲问路", "naturals": "例牌", "game": "局", "pays": "赔率", "commission": "佣金", "earlier": "前几靴", "shoe_no": "靴", "letters": {"banker": "庄", "player": "闲", "tie": "和"}},
  "zh-Hant": {"round": "局", "betting": "請下注", "dealing": "停止下注", "idle": "結果", "player": "閒", "banker": "莊", "tie": "和", "dealer": "荷官", "seat": "座位", "dp": "指定玩家", "wins": "贏", "natural": "例牌", "pair": "對子", "min": "最低", "max": "最高", "bead_plate": "珠盤路", "big_road": "大路", "big_eye_boy": "大眼仔", "small_road": "小路", "cockroach_pig": "蟑螂路", "tilt": "牌桌暫停", "stale": "無即時資料 — 等待牌桌", "offline": "離線", "win": "贏", "lose": "輸", "push": "平", "voided": "本局作廢", "last": "最近結果", "rounds": "局數", "pairs": "對子", "shoe": "本靴", "war": "戰爭", "banker_ask": "莊問路", "player_ask": "閒問路", "naturals": "例牌", "game": "局", "pays": "賠率", "commission": "佣金", "earlier": "前幾靴", "shoe_no": "靴", "letters": {"banker": "莊", "player": "閒", "tie": "和"}},
  "vi": {"round": "Ván", "betting": "MỜI ĐẶT CƯỢC", "dealing": "NGỪNG ĐẶT CƯỢC", "idle": "KẾT QUẢ", "player": "NHÀ CON", "banker": "NHÀ CÁI", "tie": "HÒA", "dealer": "NGƯỜI CHIA BÀI", "seat": "Ghế", "dp": "Người chơi chỉ định", "wins": "THẮNG", "natural": "TỰ NHIÊN", "pair": "ĐÔI", "min": "Tối thiểu", "max": "Tối đa", "bead_plate": "Bảng hạt", "big_road": "Đường lớn", "big_eye_boy": "Mắt to", "small_road": "Đường nhỏ", "cockroach_pig": "Đường gián", "tilt": "BÀN TẠM DỪNG", "stale": "MẤT TÍN HIỆU — đang chờ bàn", "offline": "Ngoại tuyến", "win": "THẮNG", "lose": "THUA", "push": "HÒA", "voided": "VÁN BỊ HỦY", "last": "Kết quả gần đây", "rounds": "Số ván", "pairs": "Đôi", "shoe": "Shoe này", "war": "Chiến", "banker_ask": "HỎI NHÀ CÁI", "player_ask": "HỎI NHÀ CON", "naturals": "Tự nhiên", "game": "Ván", "pays": "Trả", "commission": "hoa hồng", "earlier": "Các shoe trước", "shoe_no": "Shoe", "letters": {"banker": "B", "player": "P", "tie": "T"}},
  "th": {"round": "ตา", "betting": "กรุณาวางเดิมพัน", "dealing": "ปิดรับเดิมพัน", "idle": "ผลลัพธ์", "player": "ผู้เล่น", "banker": "เจ้ามือ", "tie": "เสมอ", "dealer": "ดีลเลอร์", "seat": "ที่นั่ง", "dp": "ผู้เล่นที่กำหนด", "wins": "ชนะ", "natural": "ไพ่ป๊อก", "pair": "คู่", "min": "ต่ำสุด", "max": "สูงสุด", "bead_plate": "เบดเพลต", "big_road": "บิ๊กโรด", "big_eye_boy": "บิ๊กอายบอย", "small_road": "สมอลโรด", "cockroach_pig": "ค็อกโครชพิก", "tilt": "โต๊ะหยุดชั่วคราว", "stale": "ไม่มีสัญญาณสด — กำลังรอโต๊ะ", "offline": "ออฟไลน์", "win": "ชนะ", "lose": "แพ้", "push": "เสมอ", "voided": "ตานี้เป็นโมฆะ", "last": "ผลล่าสุด", "rounds": "จำนวนตา", "pairs": "คู่", "shoe": "ชูนี้", "war": "สงคราม", "banker_ask": "ถามเจ้ามือ", "player_ask": "ถามผู้เล่น", "naturals": "ไพ่ป๊อก", "game": "ตา", "pays": "จ่าย", "commission": "ค่าคอมมิชชั่น", "earlier": "ชูก่อนหน้า", "shoe_no": "ชู", "letters": {"banker": "B", "player": "P", "tie": "T"}},
  "ko": {"round": "게임", "betting": "베팅하세요", "dealing": "베팅 마감", "idle": "결과", "player": "플레이어", "banker": "뱅커", "tie": "타이", "dealer": "딜러", "seat": "좌석", "dp": "지정 플레이어", "wins": "승", "natural": "내추럴", "pair": "페어", "min": "최소", "max": "최대", "bead_plate": "비드 플레이트", "big_road": "빅 로드", "big_eye_boy": "빅 아이 보이", "small_road": "스몰 로드", "cockroach_pig": "바퀴벌레 로드", "tilt": "테이블 중단", "stale": "실시간 신호 없음 — 테이블 대기 중", "offline": "오프라인", "win": "승", "lose": "패", "push": "무승부", "voided": "게임 무효", "last": "최근 결과", "rounds": "게임 수", "pairs": "페어", "shoe": "이번 슈", "war": "워", "banker_ask": "뱅커 예측", "player_ask": "플레이어 예측", "naturals": "내추럴", "game": "게임", "pays": "배당", "commission": "커미션", "earlier": "이전 슈", "shoe_no": "슈", "letters": {"banker": "B", "player": "P", "tie": "T"}},
};
// The one-letter marks (bead plate, history, counts): the first letter of each word, unless a language says.
for (const words of Object.values(WORDS)) {
  words.letters = words.letters || {banker: words.banker[0], player: words.player[0], tie: words.tie[0]};
}
